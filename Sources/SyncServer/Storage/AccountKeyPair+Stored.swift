import Foundation
import SyncCore

extension AccountKeyPair {
    /// A key pair as a store reads it back: nil unless both parts are set and within the wire's
    /// ranges, so that a damaged row cannot trap or leak out.
    init?(storedPublicKey: Data?, wrappedPrivateKey: Data?) {
        guard let storedPublicKey, let wrappedPrivateKey, Self.problem(publicKey: storedPublicKey) == nil,
            Self.problem(wrappedPrivateKey: wrappedPrivateKey) == nil
        else { return nil }
        self.init(publicKey: storedPublicKey, wrappedPrivateKey: wrappedPrivateKey)
    }
}

extension AccountRecovery {
    /// A recovery key's public half as a store reads it back: nil unless both parts are set and sane.
    init?(storedPublicKey: Data?, keyTag: Data?) {
        guard let storedPublicKey, let keyTag, AccountKeyPair.problem(publicKey: storedPublicKey) == nil,
            keyTag.count == 32
        else { return nil }
        self.init(publicKey: storedPublicKey, keyTag: keyTag)
    }
}

/// An account's recovery key as the server keeps it: what every device sees (``AccountRecovery``), and what
/// only a request showing the verifier gets (the sealed account key).
public struct StoredRecovery: Sendable, Hashable {
    public var recovery: AccountRecovery
    public var sealedAccountKey: Data
    public var verifierHash: Data
}
