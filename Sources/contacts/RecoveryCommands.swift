import ArgumentParser
import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import SyncCore
import SyncCrypto

/// `contacts account recovery-key` and `contacts account recover`: a key on paper that opens the account
/// after its passphrase is lost.
extension AccountCommand {
    struct RecoveryKeyCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recovery-key",
            abstract: "Make a new recovery key for the account (replacing the old one) and show it once.",
            discussion: """
                Write it down and keep it away from this machine: with it, `contacts account recover` sets a \
                new passphrase after the passphrase is lost, keeping every contact, book and share. Nothing \
                keeps it: not this device, and not the server (which keeps only the account key sealed to it). \
                Every account gets one at sign-up; run this to replace it (the old one stops working) or if \
                you lost it.
                """)
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            guard device.isSignedIn else { throw CommandFailure("not signed in; `contacts account signin` first") }
            let key = try await device.account.setUpRecoveryKey()
            RecoveryKeyCommand.show(key, replaced: true)
        }

        /// Prints the key on standard output, with what to do with it on standard error.
        static func show(_ key: RecoveryKey, replaced: Bool) {
            warn(
                "your recovery key (shown this once\(replaced ? "; any older one no longer works" : "")): write it down and keep it away from this machine; `contacts account recover` uses it if you lose the passphrase"
            )
            print(key.text)
        }
    }

    struct Recover: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recover",
            abstract: "Set a new passphrase with the recovery key, after the passphrase is lost; nothing is lost.",
            discussion: """
                Signs this device in as --username (the password is read as signin reads it) and opens the \
                account with its recovery key: $CONTACTS_RECOVERY_KEY, else the next line of standard input, \
                else asked for. The new passphrase is read as change-passphrase reads it ($CONTACTS_NEW_PASSPHRASE, \
                standard input, or asked twice; empty generates one). Every contact, book and share stays; the \
                account's other devices need the new passphrase. The recovery key used is spent: a new one is \
                printed. A wrong key changes nothing, and after a few the server makes you wait.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(help: "The account (not needed with the local server).") var username: String?

        func run() async throws {
            let device = try await Session.open(global, needsServer: false)
            let local = global.server == nil ? Session.localServer(global.dataDirectory) : nil
            let name: String
            let password: String
            if let local {
                // Started as other commands start it, without signing in with the passphrase being replaced.
                do {
                    _ = try await local.ensureRunning()
                } catch let error as LocalServerError {
                    throw CommandFailure(CLIWords.say(error))
                }
                let account = try local.account()
                (name, password) = (account.username, account.password)
            } else {
                guard let username else { throw CommandFailure("give the account: --username NAME") }
                name = username
                password = try Secret.password(variable: "CONTACTS_PASSWORD", prompt: "Password: ")
            }
            let recoveryKey = try Self.recoveryKey()
            let new = try ChangePassphrase.newPassphrase()
            let next = try await device.account.recover(
                username: name, password: password, recoveryKey: recoveryKey, newPassphrase: new.text)
            try local?.setAccountPassphrase(new.text)
            warn("recovered \(name.terminalSafe): the passphrase is new; the account's other devices need it")
            if new.generated {
                warn("the new passphrase:")
                print(new.text)
            }
            RecoveryKeyCommand.show(next, replaced: true)
            await Session.syncAfterEdit(device)
        }

        /// $CONTACTS_RECOVERY_KEY, else a line of standard input, else asked for.
        static func recoveryKey() throws -> String {
            if let text = ProcessInfo.processInfo.environment["CONTACTS_RECOVERY_KEY"], !text.isEmpty { return text }
            if isatty(0) == 0 {
                guard let line = readLine(), !line.isEmpty else {
                    throw CommandFailure("no recovery key on standard input; pipe it in or set CONTACTS_RECOVERY_KEY")
                }
                return line
            }
            FileHandle.standardError.write(Data("Recovery key (nine words): ".utf8))
            guard let line = readLine(), !line.isEmpty else { throw CommandFailure("no recovery key given") }
            return line
        }
    }
}
