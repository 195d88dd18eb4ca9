import ArgumentParser
import ContactsCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account", abstract: "Sign up, sign in, sign out, or show the account.",
        discussion: """
            Needed only with --server: without it, contacts makes and uses an account on its local server. \
            The password is read from $CONTACTS_PASSWORD, else from standard input when it is not a \
            terminal, else asked for without echo.
            """,
        subcommands: [SignUp.self, SignIn.self, SignOut.self, Status.self])

    struct Credentials: ParsableArguments {
        @Option(help: "The username (letters, digits, '.', '-', '_', '@').") var username: String

        func password() throws -> String {
            if let password = ProcessInfo.processInfo.environment["CONTACTS_PASSWORD"], !password.isEmpty {
                return password
            }
            if isatty(0) == 0 {
                guard let line = readLine(), !line.isEmpty else {
                    throw CommandFailure("no password on standard input; pipe it in or set CONTACTS_PASSWORD")
                }
                return line
            }
            guard let typed = getpass("Password: "), case let password = String(cString: typed), !password.isEmpty
            else { throw CommandFailure("no password given") }
            return password
        }

        /// Signs the device in (creating the account first when asked), then syncs.
        func signIn(_ global: GlobalOptions, creatingAccount: Bool) async throws {
            let password = try password()
            let device = try await Session.open(global, needsServer: true)
            if creatingAccount {
                try await device.signUp(username: username, password: password)
                print("signed up and signed in as \(username)")
            } else {
                try await device.signIn(username: username, password: password)
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
            abstract: "Sign this device out and remove its contacts (the server keeps them).")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: false)
            let pending = try device.store.outbox().count
            if pending > 0 {
                warn("\(pending) change(s) were not synced and are removed with this device's data")
            }
            try await device.signOut()
            print("signed out; this device's contacts were removed")
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
                    "signed in as \(try device.store.setting(.username) ?? "?") on \(try device.store.setting(.serverURL) ?? "?")"
                )
            } else {
                print("not signed in")
            }
        }
    }
}
