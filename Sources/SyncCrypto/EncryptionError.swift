/// An error from the encryption of `encryptedValues`: a passphrase that does not open the account,
/// settings or keys that are not acceptable, or ciphertext that does not open.
///
/// Like `SyncError`, a ``code`` says what happened (so that new codes do not break anyone) and a
/// ``message`` says it to a person, with what to do next.
public struct EncryptionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, by name.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The passphrase derives a key that does not match the account's verifier.
        public static let wrongPassphrase = Code(rawValue: "wrongPassphrase")
        /// The passphrase is empty, so there is nothing to derive a key from.
        public static let emptyPassphrase = Code(rawValue: "emptyPassphrase")
        /// Encryption settings (from the server, or given in code) are outside what this version accepts.
        public static let invalidSettings = Code(rawValue: "invalidSettings")
        /// A key version is outside 1...UInt32.max.
        public static let invalidKeyVersion = Code(rawValue: "invalidKeyVersion")
        /// The ciphertext or wrapped key names another key version than the key at hand.
        public static let keyVersionMismatch = Code(rawValue: "keyVersionMismatch")
        /// The ciphertext or wrapped key was written in a format this version does not know.
        public static let unsupportedFormat = Code(rawValue: "unsupportedFormat")
        /// The ciphertext or wrapped key does not open: it was altered, truncated, or belongs elsewhere.
        public static let damaged = Code(rawValue: "damaged")
    }

    /// What happened.
    public var code: Code
    /// A sentence a person can act on.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// The error a wrong passphrase meets. It has no detail: any two wrong passphrases look the same.
    public static let wrongPassphrase = EncryptionError(
        .wrongPassphrase,
        "the passphrase does not open this account's encrypted data; enter the passphrase used on your "
            + "other devices, or reset encrypted data (which deletes it)"
    )

    /// The error an empty passphrase meets.
    public static let emptyPassphrase = EncryptionError(
        .emptyPassphrase,
        "the passphrase is empty; enter the passphrase used on your other devices, or choose one to protect "
            + "this account's encrypted data"
    )

    static func invalidSettings(_ reason: String) -> EncryptionError {
        EncryptionError(
            .invalidSettings,
            "the account's encryption settings are not acceptable: \(reason); if they came from the server they "
                + "are damaged or were written by a newer version: update the app, or reset encrypted data "
                + "(which deletes it)"
        )
    }

    static func invalidKeyVersion(_ version: Int) -> EncryptionError {
        EncryptionError(
            .invalidKeyVersion,
            "key version \(version) is out of range; a key version is a whole number from 1 to \(UInt32.max)"
        )
    }
}
