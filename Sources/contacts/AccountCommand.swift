import ArgumentParser
import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import SyncCrypto

#if canImport(Glibc)
    import Glibc
#endif

struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account", abstract: "Sign up, sign in, sign out, or show the account and its passphrase.",
        discussion: """
            Needed only with --server: without it, contacts makes and uses an account on its local server, \
            with a generated passphrase kept beside its password. \
            Every contact field is encrypted on this device with a key derived from the account's passphrase, \
            which the server never sees: another device needs the same passphrase (`contacts account \
            passphrase` shows it). \
            The password is read from $CONTACTS_PASSWORD and the passphrase from $CONTACTS_PASSPHRASE, else \
            from standard input when it is not a terminal (the password on the first line, the passphrase on \
            the next), else asked for without echo.
            """,
        subcommands: [
            SignUp.self, SignIn.self, SignOut.self, Status.self, Fingerprint.self, ShowPassphrase.self,
            ChangePassphrase.self,
            RecoveryKeyCommand.self, Recover.self, ResetEncryption.self, ChangePassword.self, Sessions.self,
            Revoke.self, Delete.self,
        ])

    struct Credentials: ParsableArguments {
        @Option(help: "The username (letters, digits, '.', '-', '_', '@').") var username: String

        func password() throws -> String {
            try Secret.password(variable: "CONTACTS_PASSWORD", prompt: "Password: ")
        }

        /// Signs the device in (creating the account first when asked), then syncs.
        func signIn(_ global: GlobalOptions, creatingAccount: Bool) async throws {
            let password = try password()
            let device = try await Session.open(global, needsServer: true)
            if creatingAccount {
                let passphrase = try Secret.passphrase(generateIfEmpty: true)
                let recoveryKey = try await device.account.signUp(
                    username: username, password: password, passphrase: passphrase.text)
                print("signed up and signed in as \(username)")
                if passphrase.generated {
                    warn(
                        "your contacts are encrypted with this generated passphrase; other devices need it, so keep it somewhere safe (`contacts account passphrase` shows it again):"
                    )
                    print(passphrase.text)
                }
                if let recoveryKey {
                    RecoveryKeyCommand.show(recoveryKey, replaced: false)
                } else {
                    warn(
                        "no recovery key could be made now (the server may be older than this app); make one with `contacts account recovery-key`"
                    )
                }
            } else {
                let passphrase = try Secret.passphrase(generateIfEmpty: false)
                try await device.account.signIn(username: username, password: password, passphrase: passphrase.text)
                print("signed in as \(username)")
            }
            await Session.syncAfterEdit(device)
        }
    }

    struct SignUp: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "signup", abstract: "Create an account on the server and sign this device in.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var credentials: Credentials

        func run() async throws {
            try await credentials.signIn(global, creatingAccount: true)
        }
    }

    struct SignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "signin", abstract: "Sign this device in; its contacts sync with the account's.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var credentials: Credentials

        func run() async throws {
            try await credentials.signIn(global, creatingAccount: false)
        }
    }

    struct SignOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "signout",
            abstract: "Sign this device out and remove the account's passphrase and keys from it.",
            discussion: """
                The session ends on the server, and the session token, the passphrase and the account key are \
                removed from this device's file. Its contacts and the changes not yet sent stay: they are sent \
                when this device signs in to the same account again. Signing in to another account removes \
                them first. To remove the contacts too: contacts wipe --local-data --yes.
                """)
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: false)
            let username = try device.reader.setting(.username) ?? "the same account"
            try await device.account.signOut()
            print("signed out; the passphrase and keys were removed from this device")
            let pending = try device.reader.pendingCount()
            warn(
                "\(try device.reader.count()) contact(s) stay on this device\(pending > 0 ? ", \(pending) change(s) not synced yet" : ""); they sync when you sign in again as \(username.terminalSafe)"
            )
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Show who this device is signed in as.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: false)
            if device.isSignedIn {
                print(
                    "signed in as \(try device.reader.setting(.username) ?? "?") on \(try device.reader.setting(.serverURL) ?? "?")"
                )
                print(
                    try device.account.passphrase() == nil
                        ? "no passphrase on this device: `contacts account passphrase --set` gives it one"
                        : "contacts encrypted with the account's passphrase (`contacts account passphrase` shows it)")
            } else {
                print("not signed in")
            }
        }
    }

    struct Fingerprint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fingerprint",
            abstract: "Show this account's key fingerprint, to read to the people you share with.",
            discussion: """
                Prints the safety number (six groups of five digits) and the same fingerprint as words. Read \
                either to someone you share books with, in person or on a call: they record it with \
                `contacts book verify BOOK YOUR-NAME NUMBER`. It comes from this device's own key, not from \
                the server, and stays the same until the account's encrypted data is reset.
                """)
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            let fingerprint = try await device.books.accountFingerprint()
            print(fingerprint.safetyNumber)
            print(fingerprint.words)
        }
    }

    struct ShowPassphrase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "passphrase", abstract: "Show the account's passphrase, or give this device one.",
            discussion: """
                Prints the passphrase that encrypts the account's contacts, and only it, on standard output. \
                To use the account on another machine, sign in there with it: \
                `contacts --server URL account signin --username NAME` asks for the password, then the passphrase. \
                With --set, reads the passphrase as signin does and checks that it opens the account.
                """)
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Give this device the account's passphrase ($CONTACTS_PASSPHRASE, standard input, or asked).")
        var set = false

        func run() async throws {
            let device = try await Session.open(global, needsServer: set)
            guard device.isSignedIn else { throw CommandFailure("not signed in; `contacts account signin` first") }
            if set {
                try await device.account.setPassphrase(try Secret.passphrase(generateIfEmpty: false).text)
                warn("passphrase checked and saved on this device")
                await Session.syncAfterEdit(device)
                return
            }
            guard let passphrase = try device.account.passphrase() else {
                throw CommandFailure(
                    "this device has no passphrase; `contacts account passphrase` on a device that has one shows it, and `contacts account passphrase --set` gives it to this one"
                )
            }
            let server = try device.reader.setting(.serverURL) ?? "?"
            let username = try device.reader.setting(.username) ?? "?"
            warn(
                "the passphrase of \(username) on \(server); on another machine: `contacts --server \(server) account signin --username \(username)`, then enter the password and this passphrase"
            )
            print(passphrase)
        }
    }

    struct ResetEncryption: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-encryption",
            abstract: "For a lost passphrase: delete the encrypted contacts on the server and upload this device's.",
            discussion: """
                Deletes every encrypted zone of the account on the server, sets a new passphrase (read as signup \
                does; empty generates one) and uploads this device's contacts encrypted with it. Other devices \
                see their contacts zone reset, keep their contacts, and need the new passphrase \
                (`contacts account passphrase --set`) before they sync again.
                """)
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Do not ask for confirmation.") var yes = false

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            guard device.isSignedIn else { throw CommandFailure("not signed in; `contacts account signin` first") }
            if !yes {
                guard isatty(0) != 0 else {
                    throw CommandFailure("pass --yes to reset without a terminal to confirm on; nothing was changed")
                }
                FileHandle.standardError.write(
                    Data(
                        "This deletes the account's encrypted contacts on the server and uploads the \(try device.reader.count()) on this device. Type 'reset' to go on: "
                            .utf8))
                guard readLine() == "reset" else { throw CommandFailure("nothing was changed") }
            }
            let passphrase = try Secret.passphrase(generateIfEmpty: true)
            try await device.account.resetEncryptedData(passphrase: passphrase.text)
            if global.server == nil {
                try Session.localServer(global.dataDirectory)
                    .setAccountPassphrase(passphrase.text)
            }
            warn("encrypted data reset; \(try device.reader.count()) contacts uploaded with the new passphrase")
            if passphrase.generated {
                warn("the new passphrase (other devices need it):")
                print(passphrase.text)
            }
        }
    }
}

/// Reads the account's passphrase: $CONTACTS_PASSPHRASE, else a line of standard input when it is not a
/// terminal, else asked for without echo.
enum Secret {
    /// A password: $`variable`, else a line of standard input when it is not a terminal, else asked for
    /// without echo.
    static func password(variable: String, prompt: String) throws -> String {
        if let password = ProcessInfo.processInfo.environment[variable], !password.isEmpty { return password }
        if isatty(0) == 0 {
            guard let line = readLine(), !line.isEmpty else {
                throw CommandFailure("no password on standard input; pipe it in or set \(variable)")
            }
            return line
        }
        guard let typed = getpass(prompt), case let password = String(cString: typed), !password.isEmpty else {
            throw CommandFailure("no password given")
        }
        return password
    }

    static func passphrase(generateIfEmpty: Bool) throws -> (text: String, generated: Bool) {
        if let text = ProcessInfo.processInfo.environment["CONTACTS_PASSPHRASE"], !text.isEmpty { return (text, false) }
        let typed: String?
        if isatty(0) == 0 {
            typed = readLine()
        } else {
            let prompt =
                generateIfEmpty
                ? "Passphrase to encrypt your contacts (the server never sees it; empty generates one): "
                : "The account's passphrase (`contacts account passphrase` on another device shows it): "
            typed = getpass(prompt).map { String(cString: $0) }
        }
        if let typed, !typed.isEmpty { return (typed, false) }
        guard generateIfEmpty else {
            throw CommandFailure(
                "no passphrase given: set CONTACTS_PASSPHRASE, or pipe it in on the line after the password")
        }
        return (Passphrase.generate(), true)
    }
}
