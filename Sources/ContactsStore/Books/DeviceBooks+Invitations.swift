import ContactsModel
import Foundation
import SyncCore
import SyncCrypto
import SyncKit

/// Invitations both ways, and what people may do: the invitations waiting for this account (each with its
/// owner's key fingerprint, to compare before accepting), those this account's books wait on, declining
/// and cancelling them, and changing a person between read-only and read-write.
extension DeviceBooks {
    /// An invitation waiting for this account.
    public struct ReceivedInvitation: Sendable, Hashable {
        public var metadata: ShareMetadata
        /// The invitation, as `contacts book share` prints it: what accepting or declining it takes.
        public var invitation: ShareInvitation
        /// The owner's key as the server gives it, and whether this device verified it.
        public var ownerFingerprint: KeyFingerprint?
        public var ownerTrust: PersonKey.Trust
        public var owner: String { metadata.ownerIdentity.username }
        public var permission: ShareParticipant.Permission { metadata.participantPermission }
    }

    /// Someone one of this account's books waits on: invited, not accepted yet.
    public struct SentInvitation: Sendable, Hashable {
        public var book: AddressBook
        public var person: PersonKey
    }

    /// The invitations waiting for this account, oldest owner first.
    public func receivedInvitations() async throws -> [ReceivedInvitation] {
        _ = try signedInToken()
        let container = try sharingContainer()
        let known = try store.knownKeys()
        return try await container.invitations().map { metadata in
            let ownerKey = metadata.ownerIdentity.publicKey
            return ReceivedInvitation(
                metadata: metadata,
                invitation: ShareInvitation(serverURL: options.serverURL, token: metadata.share.token, secret: nil),
                ownerFingerprint: ownerKey.map(KeyFingerprint.init(publicKey:)),
                ownerTrust: Self.trust(in: known[metadata.ownerIdentity.userRecordName], of: ownerKey))
        }
    }

    /// The people this account's books wait on, by book. Syncs first when `online`, so that acceptances
    /// made meanwhile are known.
    public func sentInvitations(online: Bool) async throws -> [SentInvitation] {
        if online { try await sync() }
        var sent: [SentInvitation] = []
        for book in try store.books() where book.isOwn {
            let pending = Set(book.sharedWith.filter { $0.acceptanceStatus == .pending }.map(\.userRecordName))
            guard !pending.isEmpty else { continue }
            for person in try await personKeys(of: book, online: online)
            where pending.contains(person.participant.userRecordName) {
                sent.append(SentInvitation(book: book, person: person))
            }
        }
        return sent
    }

    /// The waiting invitation `text` names: the invitation itself, or the name of the account that sent it
    /// (when it sent only one).
    public func receivedInvitation(_ text: String) async throws -> ReceivedInvitation {
        let waiting = try await receivedInvitations()
        if let invitation = try? ShareInvitation(text) {
            guard let found = waiting.first(where: { $0.invitation.token == invitation.token }) else {
                throw DeviceError.noInvitation(text)
            }
            return found
        }
        let from = waiting.filter { AddressBook.sameName($0.owner, text) }
        guard from.count <= 1 else { throw DeviceError.ambiguousInvitation(text, count: from.count) }
        guard let found = from.first else { throw DeviceError.noInvitation(text) }
        return found
    }

    /// Turns down an invitation (the text, or the name of its sender): it cannot be accepted afterwards.
    public func declineInvitation(_ text: String) async throws -> ReceivedInvitation {
        let found = try await receivedInvitation(text)
        try await sharingContainer().decline(found.invitation)
        return found
    }

    /// Withdraws the invitation of `username` to one of this account's books, before they accept it.
    public func cancelInvitation(_ book: AddressBook, for username: String) async throws {
        let (container, current, person) = try await sharedPerson(username, of: book)
        guard person.acceptanceStatus == .pending else {
            throw DeviceError.invitationAccepted(book: book.name, username: person.username)
        }
        try await remove(person, from: book, share: current, container: container)
    }

    /// Makes `username` read-only or read-write in one of this account's books. The server holds the new
    /// permission at once for every device of theirs; their devices learn it at their next fetch (a push
    /// says so), and a read-only person's changes not yet sent stay in their conflict log.
    public func setPermission(_ book: AddressBook, for username: String, readOnly: Bool) async throws {
        let (container, current, person) = try await sharedPerson(username, of: book)
        let permission: ShareParticipant.Permission = readOnly ? .readOnly : .readWrite
        guard person.permission != permission else {
            throw DeviceError.samePermission(username: person.username, permission: permission.text)
        }
        let invitees = Self.invitees(of: current).map { invitee in
            var invitee = invitee
            if invitee.userRecordName == person.userRecordName { invitee.permission = permission }
            return invitee
        }
        let (share, _) = try await container.share(
            book.zoneID, with: invitees, publicPermission: current.publicPermission)
        try keepParticipants(share.participants, of: book)
    }
}

extension ShareParticipant.Permission {
    /// As people read it: "read-only", "read-write".
    public var text: String {
        switch self {
        case .none: "none"
        case .readOnly: "read-only"
        case .readWrite: "read-write"
        }
    }
}
