import Foundation
import SyncCrypto

/// Cheap scrypt parameters and ready-made accounts, so that tests derive in milliseconds.
enum TestAccount {
    /// N = 2^10, the smallest accepted: 1 MiB and a thirty-second of the default's work.
    static let parameters = try! ScryptParameters(costN: 1 << 10, blockSizeR: 8, parallelismP: 1)

    /// New settings and key for `passphrase`.
    static func make(passphrase: String = "correct horse battery staple", keyVersion: Int = 1) throws -> (
        EncryptionSettings, AccountKey
    ) {
        try EncryptionSettings.create(passphrase: passphrase, parameters: parameters, keyVersion: keyVersion)
    }
}
