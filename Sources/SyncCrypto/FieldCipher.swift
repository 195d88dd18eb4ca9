import Crypto
import Foundation

/// Seals and opens the value of one encrypted field of one record with its zone's ``ZoneKey``.
///
/// Sealed form: a format byte (1), the zone key's version (UInt32, big-endian), then AES-GCM's
/// nonce | ciphertext | tag, with a fresh random nonce each time (so sealing one value twice gives two
/// different results). The associated data is an unambiguous, length-prefixed encoding of the format,
/// record name, zone name, owner name, field name and key version: a sealed value copied to another field,
/// record or zone does not open there.
public struct FieldCipher: Sendable {
    /// The key this cipher seals with, and the only key version it opens.
    public let zoneKey: ZoneKey

    /// The format byte of a sealed value.
    static let format: UInt8 = 1
    /// The length of the header in front of AES-GCM's combined form.
    static let headerByteCount = 1 + 4

    /// Creates a cipher for the zone whose key is `zoneKey`.
    public init(zoneKey: ZoneKey) {
        self.zoneKey = zoneKey
    }

    /// Seals `plaintext` as the value of field `fieldName` of record `recordName` in zone `zoneName` of
    /// `ownerName`.
    public func seal(
        _ plaintext: Data, recordName: String, zoneName: String, ownerName: String, fieldName: String
    ) -> Data {
        // The version was checked when the key was made, so it fits.
        let version = UInt32(zoneKey.version)
        var sealed = Data([Self.format])
        SealedBytes.append(version, to: &sealed)
        let context = Self.context(
            recordName: recordName, zoneName: zoneName, ownerName: ownerName, fieldName: fieldName, version: version)
        sealed.append(SealedBytes.seal(plaintext, using: zoneKey.key, authenticating: context))
        return sealed
    }

    /// Opens a value sealed by ``seal(_:recordName:zoneName:ownerName:fieldName:)`` for the same field of
    /// the same record.
    ///
    /// - Throws: ``EncryptionError/Code/keyVersionMismatch`` when it was sealed with another version of the
    ///   zone key (``keyVersion(of:)`` says which); ``EncryptionError/Code/damaged`` when it does not open
    ///   (altered, truncated, or sealed for another field, record or zone);
    ///   ``EncryptionError/Code/unsupportedFormat`` for a format this version does not know.
    public func open(
        _ sealed: Data, recordName: String, zoneName: String, ownerName: String, fieldName: String
    ) throws -> Data {
        // Said only in errors, so it is built only when one needs it, not for every value opened.
        func field() -> String {
            "field '\(fieldName)' of record '\(recordName)' in zone '\(zoneName)' (owner '\(ownerName)')"
        }
        let bytes = [UInt8](sealed)
        let version = try Self.keyVersion(of: bytes, field: field())
        guard Int(version) == zoneKey.version else {
            throw EncryptionError(
                .keyVersionMismatch,
                "the value of \(field()) was sealed with zone key version \(version), but the key at hand is version "
                    + "\(zoneKey.version); fetch the zone's key version \(version) and open it with that")
        }
        let context = Self.context(
            recordName: recordName, zoneName: zoneName, ownerName: ownerName, fieldName: fieldName, version: version)
        guard
            let plaintext = SealedBytes.open(
                bytes[Self.headerByteCount...], using: zoneKey.key, authenticating: context)
        else {
            throw EncryptionError(
                .damaged,
                "the value of \(field()) does not open: it was altered, damaged, or copied from another field, "
                    + "record or zone; fetch the record again, or save a new value")
        }
        return plaintext
    }

    /// The version of the zone key a value was sealed with, so that the right key can be found to open it.
    ///
    /// - Throws: ``EncryptionError/Code/damaged`` when `sealed` is too short to be a sealed value;
    ///   ``EncryptionError/Code/unsupportedFormat`` for a format this version does not know.
    public static func keyVersion(of sealed: Data) throws -> Int {
        Int(try keyVersion(of: [UInt8](sealed), field: "an encrypted field"))
    }

    private static func keyVersion(of bytes: [UInt8], field: @autoclosure () -> String) throws -> UInt32 {
        guard let format = bytes.first else {
            throw EncryptionError(
                .damaged, "the value of \(field()) is empty, not sealed; fetch the record again, or save a new value")
        }
        guard format == Self.format else {
            throw EncryptionError(
                .unsupportedFormat,
                "the value of \(field()) was sealed in format \(format), which this version does not know; update the app"
            )
        }
        guard bytes.count >= headerByteCount + SealedBytes.overhead else {
            throw EncryptionError(
                .damaged,
                "the value of \(field()) is \(bytes.count) bytes long, too short to be sealed; fetch the record "
                    + "again, or save a new value")
        }
        let version = SealedBytes.uint32(in: bytes, at: 1)
        guard version >= 1 else {
            throw EncryptionError(
                .damaged, "the value of \(field()) names key version 0, which no key has; fetch the record again")
        }
        return version
    }

    private static func context(
        recordName: String, zoneName: String, ownerName: String, fieldName: String, version: UInt32
    ) -> AssociatedData {
        var context = AssociatedData(purpose: "SyncCrypto.field")
        context.append(format)
        context.append(recordName)
        context.append(zoneName)
        context.append(ownerName)
        context.append(fieldName)
        context.append(version)
        return context
    }
}
