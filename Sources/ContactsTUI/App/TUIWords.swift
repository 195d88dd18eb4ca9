import ContactsLocal
import ContactsModel

/// The libraries' errors in the full-screen app's words: what happened, and the key that helps where one
/// does (the libraries name no program's commands or keys; the `contacts` CLI has its own words).
enum TUIWords {
    /// What the local server's keeper saw, naming the commands that start a server stopped on purpose.
    static func say(_ note: LocalServerKeeper.Note) -> String {
        switch note {
        case .stoppedOnPurpose:
            "the local sync server was stopped with `contacts server stop`; `contacts server start` starts it again"
        default: note.description
        }
    }

    /// `error` as the app says it.
    static func say(_ error: any Error) -> String {
        guard let error = error as? DeviceError else { return "\(error)" }
        switch error {
        case .conflictContactDeleted(let contact, let field, _):
            return
                "\(contact.isEmpty ? "the contact" : contact) was deleted since, so there is no \(field) to put back; x dismisses the entry"
        case .notOwnerToDelete(let book, let owner):
            return "\"\(book)\" is \(owner ?? "someone else")'s book: x in the books panel leaves it"
        case .ownBookCannotBeLeft(let book):
            return "\"\(book)\" is your own book: u stops sharing it, x deletes it"
        case .noSuchBookOnDevice:
            return "that book is no longer on this device"
        case .defaultBookCannotBeShared:
            return "the default book cannot be shared: n in the books panel creates one to share"
        default:
            return error.description
        }
    }
}
