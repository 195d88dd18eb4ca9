import ArgumentParser
import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import SyncCore
import SyncCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// `contacts account change-passphrase`: a new passphrase for the account's encrypted contacts.
extension AccountCommand {
    struct ChangePassphrase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "change-passphrase",
            abstract: "Change the passphrase that encrypts the account's contacts.",
            discussion: """
                The keys of the account's books are wrapped again under the new passphrase on the server, in one \
                request; no contact is encrypted again. This device keeps the new passphrase. The account's other \
                devices say, at their next sync, that the passphrase was changed on another device, and keep their \
                contacts and pending changes until they are given the new one (`contacts account passphrase --set`). \
                The new passphrase is read from $CONTACTS_NEW_PASSPHRASE, else from standard input when it is not a \
                terminal, else asked for twice without echo; empty generates one, which is printed. With the local \
                server (no --server) the new passphrase is also kept in the data directory.
                """)
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            guard device.isSignedIn else { throw CommandFailure("not signed in; `contacts account signin` first") }
            let new = try Self.newPassphrase()
            do {
                try await device.account.changePassphrase(to: new.text)
            } catch let error as SyncError {
                throw CommandFailure("the passphrase was not changed: \(CLIWords.say(error))")
            }
            if global.server == nil {
                try Session.localServer(global.dataDirectory)
                    .setAccountPassphrase(new.text)
            }
            warn(
                "passphrase changed; the account's other devices need the new one (`contacts account passphrase --set`)"
            )
            if new.generated {
                warn("the new passphrase:")
                print(new.text)
            }
        }

        /// $CONTACTS_NEW_PASSPHRASE, else a line of standard input, else asked twice; empty generates one.
        static func newPassphrase() throws -> (text: String, generated: Bool) {
            if let text = ProcessInfo.processInfo.environment["CONTACTS_NEW_PASSPHRASE"], !text.isEmpty {
                return (text, false)
            }
            if isatty(0) == 0 {
                guard let line = readLine(), !line.isEmpty else { return (Passphrase.generate(), true) }
                return (line, false)
            }
            let prompt = "New passphrase (the server never sees it; empty generates one): "
            let typed = getpass(prompt).map { String(cString: $0) } ?? ""
            if typed.isEmpty { return (Passphrase.generate(), true) }
            let again = getpass("New passphrase again: ").map { String(cString: $0) }
            guard again == typed else { throw CommandFailure("the two passphrases differ; nothing was changed") }
            return (typed, false)
        }
    }
}
