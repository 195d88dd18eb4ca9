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
        let refused = Dictionary(try store.refusedKeys().map { ($0.previous.userRecordName, $0) }) { a, _ in a }
        return people.map { person in
            let kept = known[person.userRecordName]
            let key = current[person.userRecordName] ?? kept?.publicKey
            let trust: PersonKey.Trust
            if key == nil {
                trust = .noKey
            } else if let kept, kept.isVerified {
                trust =
                    refused[person.userRecordName] != nil || key != kept.publicKey ? .changedSinceVerified : .verified
            } else {
                trust = .unverified
            }
            return PersonKey(participant: person, fingerprint: key.map(KeyFingerprint.init(publicKey:)), trust: trust)
        }
    }

    /// Records that the person compared `username`'s key with them: `confirmation` is the safety number
    /// or the words they read out, checked against the key the server gives now. From then on a different
    /// key for them is refused. Syncs, so that a book waiting for their verified key gets it.
    @discardableResult
    public func verifyKey(of username: String, in book: AddressBook, confirmation: String) async throws
        -> KeyFingerprint
    {
        guard
            let person = book.participants.first(where: {
                AddressBook.sameName($0.username, username) && $0.acceptanceStatus != .removed
            })
        else { throw DeviceError.notSharedWith(book: book.name, username: username) }
        let container = try sharingContainer()
        guard
            case .success(let account)? = try await container.userIdentities(forUsernames: [person.username])[
                person.username], account.userRecordName == person.userRecordName
        else { throw DeviceError.noSuchAccount(username) }
        guard let key = account.publicKey else { throw DeviceError.noKeyToVerify(account.username) }
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
        guard
            let person = book.participants.first(where: {
                AddressBook.sameName($0.username, username) && $0.acceptanceStatus != .removed
            })
        else { throw DeviceError.notSharedWith(book: book.name, username: username) }
        let container = try sharingContainer()
        guard
            case .success(let account)? = try await container.userIdentities(forUsernames: [person.username])[
                person.username], let key = account.publicKey
        else { throw DeviceError.noKeyToVerify(person.username) }
        return KeyFingerprint(publicKey: key)
    }
}
