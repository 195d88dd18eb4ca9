import ArgumentParser
import ContactsLocal
import ContactsModel
import ContactsStore
import ContactsTUI
import Foundation
import SyncCore

/// The libraries' errors in this program's words: what happened, and the `contacts` command that helps.
/// (The libraries say what happened without naming any program's commands.)
enum CLIWords {
    /// `error` as this program says it; errors the libraries do not word for a program pass through.
    static func translated(_ error: any Error) -> any Error {
        switch error {
        case is DeviceError, is LocalServerError, is ContactError, is DeviceLockError: CommandFailure(say(error))
        default: error
        }
    }

    /// Any failure in this program's words: a session ended elsewhere names the command that signs in.
    static func say(_ error: any Error) -> String {
        switch error {
        case let error as DeviceError: return say(error)
        case let error as LocalServerError: return say(error)
        case let error as ContactError: return say(error)
        case let error as DeviceLockError: return say(error)
        case let error as SyncError:
            let text = SyncProblem.describe(error)
            if SyncProblem.needsPassphrase(error) { return text + " (`contacts account passphrase --set`)" }
            return SyncProblem.needsSignIn(error) ? text + " (`contacts account signin`)" : text
        default: return "\(error)"
        }
    }

    /// A sync's failure on `device`, naming the command that signs it in as it must be typed: with the
    /// `--server` and `--device` it was opened with (nothing signs in to a server given with `--server` by
    /// itself, and a command without `--device` opens another device).
    static func say(_ error: any Error, syncing device: ContactsDevice) -> String {
        let server = device.options.serverURL.absoluteString
        let signIn = SyncStatus.signInCommand(server: server, device: device.name)
        switch error {
        case DeviceError.notSignedIn:
            return
                "not signed in to \(SyncStatus.serverName(server)), so nothing was synced: `\(signIn) --username NAME` first (or `account signup` for a new account)"
        case let error as SyncError where SyncProblem.needsSignIn(error):
            return SyncProblem.describe(error) + " (`\(signIn)`)"
        default:
            return say(error)
        }
    }

    /// A local server's failure, naming the commands that help.
    static func say(_ error: LocalServerError) -> String {
        switch error {
        case .notAnswering(let pid, let log):
            "the local sync server (pid \(pid)) runs but does not answer on its socket; its log is \(log). `contacts server stop` stops it, then try again"
        case .didNotStart(let log):
            "the local sync server did not start within 30 s; its log is \(log). Or pass --server URL to use another server"
        case .didNotStop(let pid, let timeout):
            "the local sync server (pid \(pid)) did not stop within \(timeout) of SIGTERM; `kill -9 \(pid)` stops it at once (its data is safe)"
        default:
            error.description
        }
    }

    /// An input or local-data failure, naming the commands that help.
    static func say(_ error: ContactError) -> String {
        switch error {
        case .unknownID(let id):
            "no contact has the ID '\(id.terminalSafeForMessages)'; `contacts list` shows the IDs"
        case .damagedRow(let offset):
            "a contact in this device's store is damaged (unreadable at byte \(offset)); "
                + "`contacts wipe --local-data --yes` then `contacts sync` downloads the server's copy again"
        default: error.description
        }
    }

    /// A device that could not be opened, naming the option that opens another.
    static func say(_ error: DeviceLockError) -> String {
        switch error {
        case .inUse(let device):
            "device '\(device)' is open in another contacts process; close it first, or pass another --device"
        default: error.description
        }
    }

    /// A device's failure, naming the commands that help.
    static func say(_ error: DeviceError) -> String {
        switch error {
        case .notSignedIn: "not signed in: sign in first (`contacts account signin`)"
        case .wrongPassphrase:
            "the passphrase does not open this account's encrypted contacts: give the one your other devices use (`contacts account passphrase` on one of them shows it), or, if it is lost, `contacts account reset-encryption` (which deletes the contacts on the server and uploads this device's)"
        case .noPassphrase:
            "this device has no passphrase for the account's encrypted contacts: run `contacts account passphrase --set` with the passphrase of your other devices (`contacts account passphrase` on one of them shows it)"
        case .noPassphraseToChange:
            "this device has no passphrase to change: give it the account's current one first (`contacts account passphrase --set`)"
        case .passphraseChangedElsewhere:
            "the passphrase was not changed: this device's passphrase no longer opens the account's contacts, so it was changed on another device already; give this device the new one (`contacts account passphrase --set`)"
        case .noKeys:
            "this device has no passphrase, so it holds no keys: run `contacts account passphrase --set` first"
        case .noSuchBook:
            error.description + " (`contacts book list`)"
        case .noSuchBookOnDevice: "this device has no such book: `contacts book list` shows its books"
        case .notOwnerToDelete(let book, let owner):
            "\"\(book)\" is \(owner ?? "someone else")'s book: `contacts book leave` removes it from your books"
        case .defaultBookCannotBeDeleted:
            "the default book cannot be deleted; delete its contacts one by one, or everything with `contacts wipe`"
        case .ownBookCannotBeLeft(let book):
            "\"\(book)\" is your own book: `contacts book unshare` stops sharing it, `contacts book delete` deletes it"
        case .defaultBookCannotBeShared:
            "the default book cannot be shared: create one to share (`contacts book create Family`) and add contacts to it (`contacts add --book Family`)"
        case .noKeyPair(let username):
            "\"\(username)\" cannot receive encrypted books yet: their account has no key pair. They sync once with this version and their passphrase (`contacts sync`), then share the book again"
        case .notSharedWith(let book, let username):
            "\"\(book)\" is not shared with \"\(username)\"; `contacts book participants \(book)` shows who has it"
        case .noSuchConflict(let text):
            "no conflict \(text.debugDescription) in the log: `contacts conflicts` lists them"
        case .conflictGone:
            "that conflict is no longer in the log (restored or dismissed, perhaps on another device): `contacts conflicts` lists what is"
        case .conflictContactDeleted(let contact, let field, let entry):
            "\(contact.isEmpty ? "the contact" : contact) was deleted since, so there is no \(field) to put back; `contacts conflicts dismiss \(entry)` clears the entry"
        default: error.description
        }
    }
}
