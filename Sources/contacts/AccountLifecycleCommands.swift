import ArgumentParser
import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import SyncCore

#if canImport(Glibc)
    import Glibc
#endif

/// `contacts account change-password | sessions | revoke | delete`: the account's lifecycle, for a stolen
/// device or a password that leaked.
extension AccountCommand {
    /// The device these commands act through: signed in, on the server they name.
    fileprivate static func signedInDevice(_ global: GlobalOptions) async throws -> ContactsDevice {
        let device = try await Session.open(global, needsServer: true)
        guard device.isSignedIn else { throw CommandFailure("not signed in; `contacts account signin` first") }
        return device
    }

    fileprivate static func local(_ global: GlobalOptions) -> LocalServer? {
        global.server == nil
            ? Session.localServer(global.dataDirectory) : nil
    }

    /// The account's password: the local account's is in its file; otherwise asked as signin asks.
    fileprivate static func currentPassword(_ global: GlobalOptions) throws -> String {
        if let local = local(global) { return try local.account().password }
        return try Secret.password(variable: "CONTACTS_PASSWORD", prompt: "Current password: ")
    }

    struct ChangePassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "change-password",
            abstract: "Change the account's password; every other device is signed out.",
            discussion: """
                Every other session of the account ends at once, so a lost or stolen device can no longer sync; \
                those devices keep their contacts and say they were signed out. This device stays signed in. \
                The current password is read from $CONTACTS_PASSWORD and the new one from $CONTACTS_NEW_PASSWORD, \
                else from standard input when it is not a terminal (current on the first line, new on the next), \
                else asked for without echo. With the local server (no --server) the current password is the one \
                kept in the data directory, and the new one is kept there instead.
                """)
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let device = try await signedInDevice(global)
            let old = try currentPassword(global)
            let new = try Secret.password(variable: "CONTACTS_NEW_PASSWORD", prompt: "New password: ")
            if isatty(0) != 0, ProcessInfo.processInfo.environment["CONTACTS_NEW_PASSWORD"] == nil {
                let again = try Secret.password(variable: "CONTACTS_NEW_PASSWORD", prompt: "New password again: ")
                guard again == new else { throw CommandFailure("the two new passwords differ; nothing was changed") }
            }
            do {
                try await device.account.changePassword(from: old, to: new)
            } catch let error as SyncError {
                throw CommandFailure("the password was not changed: \(CLIWords.say(error))")
            }
            try local(global)?.setAccountPassword(new)
            print("password changed; every other device of the account is signed out")
        }
    }

    struct Sessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sessions",
            abstract: "List the devices signed in to the account: label, created, last used, address.",
            discussion: "`contacts account revoke ID` ends one of them; `--all-others` all but this device's.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let device = try await signedInDevice(global)
            let sessions = try await device.account.sessions()
            if json {
                print(try ContactJSON.encode(sessions))
                return
            }
            let format = Date.ISO8601FormatStyle(timeZone: .current).year().month().day().time(
                includingFractionalSeconds: false)
            func date(_ milliseconds: Int64) -> String {
                Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(format)
            }
            print(
                "  ID                                LABEL                     CREATED              LAST USED            ADDRESS"
            )
            for session in sessions {
                let label = (session.label ?? "-").terminalSafe
                print(
                    "\(session.isCurrent ? "*" : " ") \(session.id.terminalSafe.padding(toLength: 33, withPad: " ", startingAt: 0)) \(label.padding(toLength: 25, withPad: " ", startingAt: 0)) \(date(session.createdAt))  \(date(session.lastUsedAt))  \((session.address ?? "-").terminalSafe)"
                )
            }
            warn("\(sessions.count) session(s); * is this device")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "End another device's session (its ID from `contacts account sessions`), or all others.",
            discussion: """
                The device's next request is refused: it says it was signed out, keeps its contacts and unsent \
                changes, and sends them once it signs in again. A thief with its token gets nothing more.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The session's ID.") var id: String?
        @Flag(help: "End every session but this device's.") var allOthers = false

        func validate() throws {
            guard (id == nil) != (allOthers == false) else {
                throw ValidationError("give a session ID (see `contacts account sessions`) or --all-others, not both")
            }
        }

        func run() async throws {
            let device = try await signedInDevice(global)
            if allOthers {
                let ended = try await device.account.endOtherSessions()
                print("ended \(ended) other session(s)")
                return
            }
            do {
                try await device.account.endSession(id: id!)
            } catch let error as SyncError where error.code == .unknownItem {
                throw CommandFailure(
                    "no session \(id!.terminalSafe) on this account; `contacts account sessions` lists them")
            }
            print("ended session \(id!.terminalSafe)")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete the account on the server: its books, contacts, shares and sessions.",
            discussion: """
                Asks for the password (as change-password reads the current one). Books you share are removed \
                from the people you shared them with; books shared with you are left. Every device of the \
                account is signed out. This device keeps its contacts, signed out; \
                `contacts wipe --local-data --yes` removes them too.
                """)
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Confirm: the account and everything in it on the server is deleted for good.") var yes = false

        func validate() throws {
            guard yes else {
                throw ValidationError(
                    "deleting the account removes its books and contacts from the server for good; pass --yes to go on")
            }
        }

        func run() async throws {
            let device = try await signedInDevice(global)
            let username = try device.reader.setting(.username) ?? "the account"
            let password = try currentPassword(global)
            do {
                try await device.account.deleteAccount(password: password)
            } catch let error as SyncError {
                throw CommandFailure("the account was not deleted: \(CLIWords.say(error))")
            }
            try local(global)?.forgetAccount()
            print("deleted the account \(username.terminalSafe) on the server; this device is signed out")
            warn("\(try device.reader.count()) contact(s) stay on this device")
        }
    }
}
