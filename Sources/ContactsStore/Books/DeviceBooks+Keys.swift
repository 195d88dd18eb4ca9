import ContactsModel
import Foundation
import SyncCore
import SyncCrypto
import SyncKit

/// Whose key is whose: this account's fingerprint, the people of a book with theirs, and verifying one
/// after comparing it with its owner out of band. Every key the server gives goes through the keyring's
/// ``KnownKeys`` (this device's ``ContactStore/knownKeys()``), which refuses a changed verified key.
extension DeviceBooks {
    /// A person of a book and their account key, as far as this device can tell.
    public struct PersonKey: Sendable, Hashable {
        public enum Trust: Sendable, Hashable {
            /// The person compared this key's fingerprint with its owner.
            case verified
            /// Trusted on first use: nobody compared it.
            case unverified
            /// The server gives a key other than the verified one: refused until verified again.
            case changedSinceVerified
            /// The account has no key yet.
            case noKey
        }

        public var participant: ShareParticipant
        /// The key's fingerprint: the server's current one (or, offline, the one this device knows).
        public var fingerprint: KeyFingerprint?
        public var trust: Trust
    }

    /// This account's key fingerprint, from this device's own key pair (made now if the account has none).
    public func accountFingerprint() async throws -> KeyFingerprint {
        _ = try signedInToken()
        let container = try sharingContainer()
        guard let keyring = container.keyring else { throw DeviceError.noKeys }
        return KeyFingerprint(publicKey: try await keyring.accountPublicKey(for: container.privateCloudDatabase))
    }

    /// The people of `book` but this account, each with their key's fingerprint and whether it is verified.
    /// With `online`, keys are asked of the server (and checked: a changed key is noted); without, the ones
    /// this device knows are shown.
    public func personKeys(of book: AddressBook, online: Bool) async throws -> [PersonKey] {
        let me = try store.setting(.userRecordName)
        let people = book.participants.filter { $0.userRecordName != me && $0.acceptanceStatus != .removed }
        var current: [String: Data] = [:]
        if online, !people.isEmpty {
            let container = try sharingContainer()
            for case .success(let account) in try await container.userIdentities(
                forUsernames: people.map(\.username)
            ).values {
                guard let key = account.publicKey else { continue }
                current[account.userRecordName] = key
                // Notes a first sight or a change (refusals are kept and shown below, not thrown).
                try? container.checkPublicKey(of: account)
            }
        }
        let known = try store.knownKeys()
        return people.map { person in
            let kept = known[person.userRecordName]
            let key = current[person.userRecordName] ?? kept?.publicKey
            return PersonKey(
                participant: person, fingerprint: key.map(KeyFingerprint.init(publicKey:)),
                trust: Self.trust(in: kept, of: key))
        }
    }

    /// How far the key `key` the server gives for someone is to be trusted, from what this device keeps.
    static func trust(in kept: KnownKey?, of key: Data?) -> PersonKey.Trust {
        guard let key else { return .noKey }
        guard let kept, kept.isVerified else { return .unverified }
        return kept.refusedKey == nil && kept.publicKey == key ? .verified : .changedSinceVerified
    }

    /// Records that the person compared `username`'s key with them: `confirmation` is the safety number
    /// or the words they read out, checked against the key the server gives now. From then on a different
    /// key for them is refused. Syncs, so that a book waiting for their verified key gets it.
    @discardableResult
    public func verifyKey(of username: String, in book: AddressBook, confirmation: String) async throws
        -> KeyFingerprint
    {
        let (account, key) = try await currentKey(of: username, in: book)
        let fingerprint = KeyFingerprint(publicKey: key)
        guard fingerprint.matches(confirmation) else {
            throw DeviceError.fingerprintMismatch(username: account.username, safetyNumber: fingerprint.safetyNumber)
        }
        // Kept here, and as a sealed record for the account's other devices.
        let verified = KnownKey(
            userRecordName: account.userRecordName, username: account.username, publicKey: key, verifiedAt: Date())
        try write { transaction in
            try ContactStore.putKnownKey(verified, transaction.db)
            try transaction.enqueue(.record(.saveRecord(VerifiedKeyRecord.recordID(of: verified.userRecordName))))
        }
        device.refreshStatusCounts()
        if isSignedIn { try? await sync() }
        return fingerprint
    }

    /// The fingerprint the server gives now for `username` of `book`, to show before verifying.
    public func currentFingerprint(of username: String, in book: AddressBook) async throws -> KeyFingerprint {
        KeyFingerprint(publicKey: try await currentKey(of: username, in: book).key)
    }

    /// The account of `username`, a person of `book`, and the key the server gives for it now.
    private func currentKey(of username: String, in book: AddressBook) async throws -> (
        account: AccountInfo, key: Data
    ) {
        guard
            let person = book.participants.first(where: {
                AddressBook.sameName($0.username, username) && $0.acceptanceStatus != .removed
            })
        else { throw DeviceError.notSharedWith(book: book.name, username: username) }
        guard
            case .success(let account)? = try await sharingContainer().userIdentities(forUsernames: [person.username])[
                person.username], account.userRecordName == person.userRecordName
        else { throw DeviceError.noSuchAccount(username) }
        guard let key = account.publicKey else { throw DeviceError.noKeyToVerify(account.username) }
        return (account, key)
    }
}
