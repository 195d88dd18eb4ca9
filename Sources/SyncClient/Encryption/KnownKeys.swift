import Foundation
import SyncCore
import SyncCrypto

/// Another account's public key as this device last saw it, and whether its person verified it by
/// comparing its fingerprint with its owner out of band.
public struct KnownKey: Sendable, Hashable {
    public var userRecordName: String
    public var username: String
    public var publicKey: Data
    /// When the person verified this key; nil when they never did (it is trusted on first use).
    public var verifiedAt: Date?
    /// The other key the server last gave for this verified account, refused; nil when the server gives
    /// the verified key (again), or once the person verifies a key.
    public var refusedKey: Data?

    public init(
        userRecordName: String, username: String, publicKey: Data, verifiedAt: Date? = nil, refusedKey: Data? = nil
    ) {
        self.userRecordName = userRecordName
        self.username = username
        self.publicKey = publicKey
        self.verifiedAt = verifiedAt
        self.refusedKey = refusedKey
    }

    public var fingerprint: KeyFingerprint { KeyFingerprint(publicKey: publicKey) }
    public var isVerified: Bool { verifiedAt != nil }
}

/// Where a device keeps the public keys it saw for other accounts (``KnownKey``), and hears of a
/// key that changed. The keyring checks every key the server hands out against it before wrapping a
/// zone's keys to it or accepting a share as coming from it: a key never seen is kept (trust on first
/// use); a changed key of an account never verified replaces the old one with a warning
/// (``KeyChange``); a changed key of a verified account is refused (``SyncError/Reason/verifiedKeyChanged``)
/// until the person verifies the new one. Keep it on the device, never on the server.
public struct KnownKeys: Sendable {
    /// The key kept for `account`: by its user record name, or else a verified key kept for the same
    /// username (case aside) under another record name, so that a server that names the person anew is
    /// not believed.
    public var load: @Sendable (_ account: AccountInfo) throws -> KnownKey?
    public var save: @Sendable (_ key: KnownKey) throws -> Void
    /// Told of every change of a known key, refused or taken.
    public var changed: @Sendable (_ change: KeyChange) -> Void

    public init(
        load: @escaping @Sendable (_ account: AccountInfo) throws -> KnownKey?,
        save: @escaping @Sendable (_ key: KnownKey) throws -> Void,
        changed: @escaping @Sendable (_ change: KeyChange) -> Void
    ) {
        self.load = load
        self.save = save
        self.changed = changed
    }

    /// Checks the key the server gave for `account`: throws `permissionFailure` (reason
    /// ``SyncError/Reason/verifiedKeyChanged``) when it differs from the verified one.
    func check(_ account: AccountInfo, publicKey: Data) throws {
        if let refused = try refusal(of: account, publicKey: publicKey) { throw refused.refusal }
    }

    /// Throws, as ``check(_:publicKey:)`` does, when the server gives no usable key for `account` but the
    /// person verified one: a share is not accepted as coming from nobody in their name.
    func checkMissingKey(of account: AccountInfo) throws {
        guard let known = try load(account), known.isVerified else { return }
        var error = SyncError(
            .permissionFailure,
            "the server gives no account key for \(account.username), whose key you verified (safety number \(known.fingerprint.safetyNumber)): nothing is accepted from them until it gives that key again; the server may be impersonating them"
        )
        error.reason = .verifiedKeyChanged
        throw error
    }

    /// The change of a verified key that the key the server gave for `account` is, or nil when the key
    /// may be used (it is kept: first seen, the same, or changed for an account never verified).
    func refusal(of account: AccountInfo, publicKey: Data) throws -> KeyChange? {
        let seen = KnownKey(userRecordName: account.userRecordName, username: account.username, publicKey: publicKey)
        guard var known = try load(account) else {
            try save(seen)
            return nil
        }
        if known.userRecordName == account.userRecordName, known.publicKey == publicKey {
            // The verified key again: a refusal of another key is over.
            if known.username != account.username || known.refusedKey != nil {
                known.username = account.username
                known.refusedKey = nil
                try save(known)
            }
            return nil
        }
        let change = KeyChange(previous: known, current: seen)
        changed(change)
        if change.isRefused { return change }
        try save(seen)
        return nil
    }
}

/// A public key the server gave for an account that differs from the one this device knew.
public struct KeyChange: Sendable, Hashable, CustomStringConvertible {
    public var previous: KnownKey
    public var current: KnownKey

    public init(previous: KnownKey, current: KnownKey) {
        self.previous = previous
        self.current = current
    }

    /// Whether the old key was verified: then the new one is refused until verified.
    public var isRefused: Bool { previous.isVerified }

    public var description: String {
        let who = current.username
        return isRefused
            ? "\(who)'s account key CHANGED and you had verified the old one: nothing more is shared with \(who) and nothing is accepted from them until you compare the new safety number (\(current.fingerprint.safetyNumber)) with \(who) and verify it again; the server may be impersonating them"
            : "\(who)'s account key changed (safety number now \(current.fingerprint.safetyNumber)); if \(who) did not reset their encrypted data, the server may be impersonating them: compare safety numbers and verify"
    }

    var refusal: SyncError {
        var error = SyncError(.permissionFailure, description)
        error.reason = .verifiedKeyChanged
        return error
    }
}
