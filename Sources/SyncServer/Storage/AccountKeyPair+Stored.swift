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
