import Foundation
import SyncCore

/// An account's recovery key as the server keeps it: what every device sees (``AccountRecovery``), and what
/// only a request showing the verifier gets past (the sealed account key, against the verifier's hash).
public struct StoredRecovery: Sendable, Hashable {
    public var recovery: AccountRecovery
    public var sealedAccountKey: Data
    public var verifierHash: Data

    public init(recovery: AccountRecovery, sealedAccountKey: Data, verifierHash: Data) {
        self.recovery = recovery
        self.sealedAccountKey = sealedAccountKey
        self.verifierHash = verifierHash
    }
}

extension AccountRecovery {
    /// A recovery key's public half as a store reads it back: nil unless every part is set and sane.
    init?(storedPublicKey: Data?, keyTag: Data?, bindingTag: Data?) {
        guard let storedPublicKey, let keyTag, let bindingTag,
            AccountKeyPair.problem(publicKey: storedPublicKey) == nil,
            keyTag.count == 32, bindingTag.count == 32
        else { return nil }
        self.init(publicKey: storedPublicKey, keyTag: keyTag, bindingTag: bindingTag)
    }
}
