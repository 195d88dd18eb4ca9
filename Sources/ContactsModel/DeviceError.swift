import Foundation

/// Why a device could not do what was asked, with the facts a message needs. Programs word these their own
/// way, naming their own commands and keys (the `contacts` CLI in its `CLIWords`, the full-screen app in its
/// own); ``description`` says what happened and what to do, without naming any program's commands.
public enum DeviceError: Error, Sendable, Equatable, CustomStringConvertible {
    // The account and its passphrase.
    /// The device has no session with the server.
    case notSignedIn
    /// The passphrase given does not open the account's encrypted contacts.
    case wrongPassphrase
    /// The device has no passphrase, and the account's contacts are encrypted.
    case noPassphrase
    /// A passphrase change on a device that has none.
    case noPassphraseToChange
    /// The new passphrase is the account's current one.
    case samePassphrase
    /// The device's passphrase no longer opens the account: another device changed it.
    case passphraseChangedElsewhere
    /// Key operations on a device without a passphrase (it holds no keys).
    case noKeys

    // Books.
    /// No book has the name given; `books` are the device's books' names.
    case noSuchBook(String, books: [String])
    /// Several books have the name given; `candidates` are their `NAME@OWNER` forms.
    case ambiguousBook(String, candidates: [String])
    /// The book named is not on this device (any more).
    case noSuchBookOnDevice
    /// A book's name that is empty, too long or holds control characters.
    case invalidBookName
    /// The account has a book of this name already.
    case bookNameTaken(String)
    /// Deleting a book another account owns (`owner`; nil when unknown).
    case notOwnerToDelete(book: String, owner: String?)
    /// The default book cannot be deleted.
    case defaultBookCannotBeDeleted
    /// Leaving a book one owns.
    case ownBookCannotBeLeft(String)
    /// Changing the key of a book another account owns.
    case notOwnerToRotateKey(book: String, owner: String?)
    /// Sharing a book another account owns.
    case notOwnerToShare(book: String, owner: String?)
    /// The default book cannot be shared.
    case defaultBookCannotBeShared

    // Sharing.
    /// The server has no account of this name.
    case noSuchAccount(String)
    /// Sharing with one's own account.
    case shareWithSelf(String)
    /// The account has no key pair yet, so encrypted books cannot be shared with it.
    case noKeyPair(String)
    /// The book is not shared with this account.
    case notSharedWith(book: String, username: String)
    /// An invitation's text is not one (the reason).
    case unreadableInvitation(String)
    /// An invitation for another server than the device's.
    case invitationForAnotherServer(invitation: String, device: String)
    /// An invitation that opens nothing for this account.
    case invitationOpensNothing

    // The conflict log and edits.
    /// No conflict entry's ID is or starts with the text given.
    case noSuchConflict(String)
    /// More than one conflict entry's ID starts with the text given.
    case ambiguousConflict(String)
    /// The conflict entry is not in the log any more.
    case conflictGone
    /// The contact of a conflict entry was deleted, so its value cannot be put back.
    case conflictContactDeleted(contact: String, field: String, entry: String)
    /// A merge of fewer than two distinct contacts.
    case mergeNeedsTwo
    /// A merge of contacts in different books.
    case mergeAcrossBooks(String, String)

    // Mail.
    /// A message without a `From:` header.
    case noFromHeader
    /// A `From:` header without exactly one address (the header, shortened).
    case noSingleAddress(String)
    /// The fingerprint a person typed is not the key the server gives for the account.
    case fingerprintMismatch(username: String, safetyNumber: String)
    /// An account without a public key cannot be verified yet.
    case noKeyToVerify(String)
    /// `cancel` for someone who accepted already.
    case invitationAccepted(book: String, username: String)
    /// No pending invitation from (or matching) the text.
    case noInvitation(String)
    /// Several pending invitations from one owner: the invitation text picks one.
    case ambiguousInvitation(String, count: Int)
    /// A permission change to the permission the person has.
    case samePermission(username: String, permission: String)
    /// Text that is not a recovery key (the reason).
    case unreadableRecoveryKey(String)
    /// A well-formed recovery key that is not the account's.
    case wrongRecoveryKey
    /// The account has no recovery key.
    case noRecoveryKey

    public var description: String {
        switch self {
        case .fingerprintMismatch(let username, let safetyNumber):
            "that is not the safety number of \"\(username)\"'s key as the server gives it (\(safetyNumber)): nothing was verified. Check that you compared with \"\(username)\" themselves (`contacts account fingerprint` on their device); if it still differs, the server may be impersonating them: do not share with this account"
        case .noKeyToVerify(let username):
            "\"\(username)\" has no account key yet (they have not synced with a passphrase), so there is nothing to verify; verify once they have synced"
        case .invitationAccepted(let book, let username):
            "\"\(username)\" accepted \"\(book)\" already: to take it away, run contacts book unshare"
        case .noInvitation(let text):
            "no invitation for this account matches \(text.debugDescription): `contacts book invitations` lists them"
        case .ambiguousInvitation(let owner, let count):
            "\(count) invitations from \"\(owner)\" are waiting: give the invitation itself, as `contacts book invitations` prints it"
        case .unreadableRecoveryKey(let reason): reason
        case .wrongRecoveryKey:
            "this is not the account's recovery key; nothing was changed. Check each word (the server counts wrong keys and, after a few, makes you wait)"
        case .noRecoveryKey:
            "this account has no recovery key, so it cannot be recovered; only resetting its encrypted data is left (contacts account reset-encryption), which deletes its contacts on the server"
        case .samePermission(let username, let permission):
            "\"\(username)\" is \(permission) already; nothing was changed"
        case .notSignedIn: "not signed in: sign in first"
        case .wrongPassphrase:
            "the passphrase does not open this account's encrypted contacts: give the one your other devices use, or, if it is lost, reset the account's encryption (which deletes the contacts on the server and uploads this device's)"
        case .noPassphrase:
            "this device has no passphrase for the account's encrypted contacts: give it the passphrase of your other devices"
        case .noPassphraseToChange:
            "this device has no passphrase to change: give it the account's current one first"
        case .samePassphrase: "the new passphrase is the one the account has; nothing was changed"
        case .passphraseChangedElsewhere:
            "the passphrase was not changed: this device's passphrase no longer opens the account's contacts, so it was changed on another device already; give this device the new one"
        case .noKeys: "this device has no passphrase, so it holds no keys: give it the account's passphrase first"
        case .noSuchBook(let name, let books):
            "no book named \"\(name.terminalSafe)\" on this device; its books are \(Self.quoted(books))"
        case .ambiguousBook(let name, let candidates):
            "\(candidates.count) books are named \"\(name.terminalSafe)\": name one as \(Self.quoted(candidates))"
        case .noSuchBookOnDevice: "this device has no such book"
        case .invalidBookName: "a book's name is 1 to 100 characters, without control characters, such as \"Family\""
        case .bookNameTaken(let name): "you have a book named \"\(name)\" already; choose another name"
        case .notOwnerToDelete(let book, let owner):
            "\"\(book)\" is \(owner ?? "someone else")'s book: leave it to remove it from your books"
        case .defaultBookCannotBeDeleted:
            "the default book cannot be deleted; delete its contacts one by one, or wipe everything"
        case .ownBookCannotBeLeft(let book):
            "\"\(book)\" is your own book: stop sharing it, or delete it"
        case .notOwnerToRotateKey(let book, let owner):
            "\"\(book)\" is \(owner ?? "someone else")'s book: only its owner changes its key"
        case .notOwnerToShare(let book, let owner):
            "\"\(book)\" is \(owner ?? "someone else")'s book: only its owner shares it"
        case .defaultBookCannotBeShared:
            "the default book cannot be shared: create a book to share and add contacts to it"
        case .noSuchAccount(let username):
            "the server has no account named \"\(username)\"; check the name with its owner"
        case .shareWithSelf(let username): "\"\(username)\" is you: share the book with someone else"
        case .noKeyPair(let username):
            "\"\(username)\" cannot receive encrypted books yet: their account has no key pair. They sync once with this version and their passphrase, then share the book again"
        case .notSharedWith(let book, let username): "\"\(book)\" is not shared with \"\(username)\""
        case .unreadableInvitation(let reason): reason
        case .invitationForAnotherServer(let invitation, let device):
            "this invitation is for the server at \(invitation), but this device syncs with \(device): accept it on a device of that server"
        case .invitationOpensNothing:
            "this invitation opens nothing for this account: it was withdrawn, is for someone else, or was copied incompletely; ask its owner to share again"
        case .noSuchConflict(let text): "no conflict \(text.debugDescription) in the log"
        case .ambiguousConflict(let text):
            "\(text.debugDescription) starts more than one conflict's ID: give more of it"
        case .conflictGone:
            "that conflict is no longer in the log (restored or dismissed, perhaps on another device)"
        case .conflictContactDeleted(let contact, let field, let entry):
            "\(contact.isEmpty ? "the contact" : contact) was deleted since, so there is no \(field) to put back; dismiss entry \(entry) to clear it"
        case .mergeNeedsTwo: "give two contacts or more to merge, each once"
        case .mergeAcrossBooks(let contact, let other):
            "\(contact) is in another book than \(other); merge contacts of one book"
        case .noFromHeader: "the message has no From: header; pipe the whole message, headers included"
        case .noSingleAddress(let header): "the From: header holds no single email address ('\(header.terminalSafe)')"
        }
    }

    /// Names as a message lists them: each in quotes, made safe for the terminal.
    static func quoted(_ names: [String]) -> String {
        names.map { "\"\($0.terminalSafe)\"" }.joined(separator: ", ")
    }
}
