import ArgumentParser
import ContactsModel
import ContactsStore
import Foundation
import SyncClient
import SyncCore
import SyncCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// `contacts book verify|invitations|decline|cancel|permission`: whose key is whose, and invitations and
/// access both ways.
extension BookCommand {
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Record that you compared a person's safety number with them (in person, or by a call).",
            discussion: """
                Ask PERSON to run `contacts account fingerprint` and read you their safety number (or its \
                words); give it as SAFETY_NUMBER, or leave it out on a terminal to be shown the number the \
                server gives and asked whether it matches. Once verified, a different key for PERSON is \
                refused: nothing more is shared with them or accepted from them until you verify again, since \
                only a server impersonating them (or their reset of encrypted data) changes it.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The book you share with them.") var name: String
        @Argument(help: "The person's account name.") var person: String
        @Argument(help: "The safety number or words they read to you.") var safetyNumber: String?

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            let book = try device.reader.resolveBook(name)
            var confirmation = safetyNumber
            if confirmation == nil {
                guard isatty(0) != 0 else {
                    throw CommandFailure(
                        "give the safety number \(person.terminalSafe) reads to you from `contacts account fingerprint` (contacts book verify \(name.terminalSafe) \(person.terminalSafe) 'NUMBER')"
                    )
                }
                let shown = try await device.books.currentFingerprint(of: person, in: book)
                warn("\(person.terminalSafe)'s safety number, as the server gives it: \(shown.safetyNumber)")
                warn("                                                  words: \(shown.words)")
                FileHandle.standardError.write(Data("Is this what \(person.terminalSafe) reads to you? [y/N] ".utf8))
                guard let answer = readLine(), answer.lowercased().hasPrefix("y") else {
                    throw CommandFailure("not verified")
                }
                confirmation = shown.safetyNumber
            }
            let fingerprint = try await device.books.verifyKey(of: person, in: book, confirmation: confirmation ?? "")
            Session.sayWarnings(device)
            print("verified \(person.terminalSafe): \(fingerprint.safetyNumber)")
        }
    }

    struct Invitations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "invitations",
            abstract: "List invitations waiting for you (with each sender's safety number) and those you sent.",
            discussion: """
                Compare a sender's safety number with them before you accept: `contacts book accept SENDER` \
                (or the invitation) accepts, `contacts book decline SENDER` turns it down. Invitations you \
                sent wait until the person accepts; `contacts book cancel BOOK PERSON` withdraws one.
                """)
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            let received = try await device.books.receivedInvitations()
            let sent = try await device.books.sentInvitations(online: true)
            Session.sayWarnings(device)
            print("received:" + (received.isEmpty ? " none" : ""))
            for invitation in received {
                let columns = [
                    "  from " + invitation.owner.terminalSafe, invitation.permission.text,
                    invitation.ownerFingerprint?.safetyNumber ?? "no key", invitation.ownerTrust.text,
                    invitation.invitation.description,
                ]
                print(columns.joined(separator: "\t"))
            }
            print("sent:" + (sent.isEmpty ? " none" : ""))
            for invitation in sent {
                let columns = [
                    "  " + invitation.book.name.terminalSafe,
                    "to " + invitation.person.participant.username.terminalSafe,
                    invitation.person.participant.permission.text,
                    invitation.person.fingerprint?.safetyNumber ?? "no key", invitation.person.trust.text,
                ]
                print(columns.joined(separator: "\t"))
            }
        }
    }

    struct Decline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "decline", abstract: "Turn down an invitation; it cannot be accepted afterwards.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The invitation, or the account that sent it (when it sent you one).") var invitation: String

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            let declined = try await device.books.declineInvitation(invitation)
            print("declined the invitation from \(declined.owner.terminalSafe)")
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cancel",
            abstract: "Withdraw an invitation to one of your books before the person accepts it.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The book's name.") var name: String
        @Argument(help: "The person invited.") var person: String

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            let book = try device.reader.resolveBook(name)
            try await device.books.cancelInvitation(book, for: person)
            print("withdrew the invitation of \(person.terminalSafe) to \"\(book.name.terminalSafe)\"")
        }
    }

    struct Permission: AsyncParsableCommand {
        enum Level: String, ExpressibleByArgument, CaseIterable {
            case readOnly = "read-only"
            case readWrite = "read-write"
        }

        static let configuration = CommandConfiguration(
            commandName: "permission",
            abstract: "Make a person read-only or read-write in one of your books.",
            discussion: """
                The server holds the change at once for every device of theirs. A read-only person's changes \
                not yet sent are refused on their devices, before sending, and kept in their conflict log.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The book's name.") var name: String
        @Argument(help: "The person.") var person: String
        @Argument(help: "read-only or read-write.") var level: Level

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            let book = try device.reader.resolveBook(name)
            try await device.books.setPermission(book, for: person, readOnly: level == .readOnly)
            print("\(person.terminalSafe) is \(level.rawValue) in \"\(book.name.terminalSafe)\"")
        }
    }
}

extension DeviceBooks.PersonKey.Trust {
    /// As `contacts book participants` and `invitations` show it.
    var text: String {
        switch self {
        case .verified: "verified"
        case .unverified: "not verified"
        case .changedSinceVerified: "KEY CHANGED since verified: refused until verified again"
        case .noKey: "no key yet"
        }
    }
}
