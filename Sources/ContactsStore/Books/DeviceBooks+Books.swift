import ContactsModel
import Foundation
import SyncCore
import SyncKit

/// Address books: creating, renaming and deleting one's own; sharing them; accepting and leaving
/// those others share. Local changes are saved and queued like edits; sharing needs the server.
extension DeviceBooks {
    /// Creates a book of one's own; it reaches the server with the next sync.
    @discardableResult
    public func createBook(named text: String) throws -> AddressBook {
        let name = try BookName.validated(text)
        let book = AddressBook.new(named: name)
        try write { transaction in
            if try ContactStore.books(transaction.db).contains(where: {
                $0.isOwn && AddressBook.sameName($0.name, name)
            }) {
                throw DeviceError.bookNameTaken(name)
            }
            try ContactStore.putBook(book, transaction.db)
            try transaction.enqueue(.zone(.saveZone(RecordZone(zoneID: book.zoneID))))
            try transaction.enqueue(.record(.saveRecord(book.recordID)))
        }
        announce(.contactsChanged)
        return book
    }

    /// Renames a book: one's own, or one shared read-write (everyone who has it sees the new name).
    @discardableResult
    public func renameBook(_ book: AddressBook, to text: String) throws -> AddressBook {
        let name = try BookName.validated(text)
        let renamed = AddressBook(
            zoneID: book.zoneID, name: name, access: book.access, ownerUsername: book.ownerUsername,
            participants: book.participants)
        try write { transaction in
            try DeviceContacts.checkWritable(book.zoneID, transaction.db)
            try ContactStore.putBook(renamed, transaction.db)
            try transaction.enqueue(.record(.saveRecord(book.recordID)))
        }
        announce(.contactsChanged)
        return renamed
    }

    /// Deletes one of the person's books with its contacts, here at once and everywhere once synced
    /// (everyone it is shared with loses it too).
    public func deleteBook(_ book: AddressBook) throws {
        guard book.isOwn else {
            throw DeviceError.notOwnerToDelete(book: book.name, owner: book.ownerUsername)
        }
        guard !book.isDefault else {
            throw DeviceError.defaultBookCannotBeDeleted
        }
        try removeEverywhere(book)
    }

    /// Leaves a book someone shares with this account: it disappears from every device of the account.
    public func leaveBook(_ book: AddressBook) throws {
        guard !book.isOwn else {
            throw DeviceError.ownBookCannotBeLeft(book.name)
        }
        try removeEverywhere(book)
    }

    /// Removes a book here and queues its zone's deletion: from the private database it deletes the
    /// book; from the shared one it leaves it.
    private func removeEverywhere(_ book: AddressBook) throws {
        try write { transaction in
            try transaction.removeBook(book.zoneID)
            try transaction.enqueue(.zone(.deleteZone(book.zoneID)))
        }
        announce(.contactsChanged)
    }

    // MARK: Sharing (needs the server)

    /// Shares one of the person's books with the account named `username` (who keeps access until
    /// removed), and returns the invitation to hand them. Syncs first, so that the book is on the server.
    public func shareBook(_ book: AddressBook, with username: String, readOnly: Bool) async throws -> ShareInvitation {
        try checkShareable(book)
        try await sync()
        let container = try sharingContainer()
        let account: AccountInfo
        switch try await container.userIdentities(forUsernames: [username])[username] {
        case .success(let found)?: account = found
        default: throw DeviceError.noSuchAccount(username)
        }
        guard account.userRecordName != (try store.setting(.userRecordName)) else {
            throw DeviceError.shareWithSelf(username)
        }
        // A key other than the one verified for them is refused here, loudly, before anything is shared.
        try container.checkPublicKey(of: account)
        guard try account.publicKey != nil || store.setting(.passphrase) == nil else {
            // The book's keys are wrapped to each participant's public key, which an account gets when one
            // of its devices first signs in with this version and its passphrase.
            throw DeviceError.noKeyPair(username)
        }
        let current = try await container.share(for: book.zoneID)
        let invitees =
            Self.invitees(of: current).filter { $0.userRecordName != account.userRecordName }
            + [.init(userRecordName: account.userRecordName, permission: readOnly ? .readOnly : .readWrite)]
        let (share, invitation) = try await container.share(
            book.zoneID, with: invitees, publicPermission: current?.publicPermission ?? .none)
        try keepParticipants(share.participants, of: book)
        return invitation
    }

    /// Stops sharing one of the person's books with `username` (with nobody left, the share is deleted).
    public func unshareBook(_ book: AddressBook, from username: String) async throws {
        let (container, current, removed) = try await sharedPerson(username, of: book)
        try await remove(removed, from: book, share: current, container: container)
    }

    /// One of this account's books' share, and the person `username` in it (not removed), with the container
    /// that changes it.
    func sharedPerson(_ username: String, of book: AddressBook) async throws -> (
        container: Container, share: Share, person: ShareParticipant
    ) {
        try checkShareable(book)
        let container = try sharingContainer()
        guard let current = try await container.share(for: book.zoneID),
            let person = AddressBook.sharedWith(current.participants).first(where: {
                AddressBook.sameName($0.username, username)
            })
        else {
            throw DeviceError.notSharedWith(book: book.name, username: username)
        }
        return (container, current, person)
    }

    /// Takes `removed` out of the book's share `current` (with nobody left, the share is deleted).
    func remove(_ removed: ShareParticipant, from book: AddressBook, share current: Share, container: Container)
        async throws
    {
        let rest = Self.invitees(of: current).filter { $0.userRecordName != removed.userRecordName }
        if rest.isEmpty && current.publicPermission == .none {
            try await container.deleteShare(for: book.zoneID)
            try keepParticipants([], of: book)
        } else {
            let (share, _) = try await container.share(
                book.zoneID, with: rest, publicPermission: current.publicPermission)
            try keepParticipants(share.participants, of: book)
        }
    }

    /// Makes a new key version for one of the person's books: what is written to it from now on is
    /// sealed with the new key, which only the people it is shared with now receive. Nothing already
    /// in the book is sealed again. Returns the new version.
    @discardableResult
    public func rotateBookKey(_ book: AddressBook) async throws -> Int {
        guard book.isOwn else {
            throw DeviceError.notOwnerToRotateKey(book: book.name, owner: book.ownerUsername)
        }
        _ = try signedInToken()
        guard try store.setting(.passphrase) != nil else {
            throw DeviceError.noKeys
        }
        try await sync()
        let upkeep = try await sharingContainer().rotateZoneKey(for: book.zoneID)
        // The device's own engine learns the new version at this sync's fetch.
        try await sync()
        return upkeep.newestVersion ?? 0
    }

    /// This account's key pair, and the owner's side of shared books' keys, at each sync: a new key version when someone who held the
    /// newest one is no longer in the share (they left, or another device removed them), the keys wrapped
    /// to participants who lack the newest version, and shares made before key pairs moved to them.
    func keepSharedBookKeys() async throws {
        guard isSignedIn, try store.setting(.passphrase) != nil else { return }
        // Others can share books with this account only once it has a key pair: an account set up before
        // key pairs gets one at its first sync with this version. The engines' keyring holds the pair after
        // the sync's `prepareKeys` (which checked the passphrase too), so this asks nothing then.
        let database = engine.database
        if let keyring = database.keyring, !keyring.holdsKeyPair { try await keyring.unlock(for: database) }
        let shared = try store.books().filter { $0.isOwn && $0.participants.contains { $0.role != .owner } }
        guard !shared.isEmpty else { return }
        let container = try sharingContainer()
        for book in shared { try await container.updateZoneKeys(for: book.zoneID) }
    }

    /// Accepts an invitation (the text `contacts book share` printed): the book appears among this
    /// account's books, on every device, with the next sync of each.
    @discardableResult
    public func acceptInvitation(_ text: String) async throws -> AddressBook {
        let invitation: ShareInvitation
        do {
            invitation = try ShareInvitation(text)
        } catch let error as SyncError {
            throw DeviceError.unreadableInvitation(error.message)
        }
        guard Self.sameServer(invitation.serverURL, options.serverURL) else {
            throw DeviceError.invitationForAnotherServer(
                invitation: invitation.serverURL.absoluteString, device: options.serverURL.absoluteString)
        }
        let metadata: ShareMetadata
        do {
            metadata = try await sharingContainer().accept(invitation)
        } catch let error as SyncError where error.code == .unknownItem {
            throw DeviceError.invitationOpensNothing
        }
        let zoneID = metadata.share.zoneID
        try write { transaction in
            var book = try ContactStore.bookOrUnknown(zoneID, transaction.db)
            book.ownerUsername = metadata.ownerIdentity.username
            book.access = metadata.participantPermission == .readWrite ? .readWrite : .readOnly
            book.participants = metadata.share.participants
            try ContactStore.putBook(book, transaction.db)
        }
        try await sync()
        return try store.book(zoneID) ?? AddressBook.unknown(zoneID)
    }

    // MARK: Helpers

    /// A container for the sharing calls, signed in as this device, with its keyring (an encrypted
    /// book's keys are wrapped to each participant's public key).
    func sharingContainer() throws -> Container {
        Container(
            identifier: "contacts", serverURL: options.serverURL, credentials: .store(credentials),
            deviceID: try store.setting(.deviceID), keyring: try store.setting(.passphrase).map(keyring),
            sealedRecordTypes: ContactsDevice.sealedRecordTypes)
    }

    func checkShareable(_ book: AddressBook) throws {
        guard book.isOwn else {
            throw DeviceError.notOwnerToShare(book: book.name, owner: book.ownerUsername)
        }
        guard !book.isDefault else {
            throw DeviceError.defaultBookCannotBeShared
        }
        _ = try signedInToken()
    }

    /// The people a share keeps (the owner and those removed aside), as a changed share names them.
    static func invitees(of share: Share?) -> [SaveShareRequest.Invitee] {
        (share?.participants ?? []).filter { $0.role == .privateUser && $0.acceptanceStatus != .removed }.map {
            .init(userRecordName: $0.userRecordName, permission: $0.permission)
        }
    }

    func keepParticipants(_ participants: [ShareParticipant], of book: AddressBook) throws {
        try write { transaction in
            guard var kept = try ContactStore.book(book.zoneID, transaction.db) else { return }
            kept.participants = participants
            try ContactStore.putBook(kept, transaction.db)
        }
        announce(.contactsChanged)
    }

    static func sameServer(_ a: URL, _ b: URL) -> Bool {
        func key(_ url: URL) -> String {
            var text = url.absoluteString.lowercased()
            while text.hasSuffix("/") { text.removeLast() }
            return text
        }
        return key(a) == key(b)
    }
}
