import Crypto
import Foundation

/// Seals and opens the value of one encrypted field of one record with its zone's ``ZoneKey``.
///
/// Sealed form (format 2): a format byte (2), the zone key's version (UInt32, big-endian), then AES-GCM's
/// nonce | ciphertext | tag, with a fresh random nonce each time (so sealing one value twice gives two
/// different results). The plaintext is the record's version (UInt64, big-endian: a number that only grows
/// for that record, so that a device that has seen a newer value can refuse an older one) followed by the
/// value's bytes. The associated data is an unambiguous, length-prefixed encoding of the format, record
/// type, record name, zone name, owner name, field name and key version: a sealed value copied to another
/// field, record, zone or record type, or relabelled with another key version, does not open there.
///
/// Format 1, written by earlier versions (no record version, no record type in the associated data), still
/// opens, with record version 0.
public struct FieldCipher: Sendable {
    /// What a sealed value holds: the value and the version of the record it was sealed for.
    public struct Opened: Sendable, Hashable {
        /// The version of the record the value was sealed for; 0 for a value of format 1, which had none.
        public let recordVersion: UInt64
        /// The value's bytes.
        public let value: Data
    }

    /// The key this cipher seals with, and the only key version it opens.
    public let zoneKey: ZoneKey

    /// The format byte this version writes.
    static let format: UInt8 = 2
    /// The format byte earlier versions wrote, which still opens.
    static let formatWithoutRecordVersion: UInt8 = 1
    /// The length of the header in front of AES-GCM's combined form.
    static let headerByteCount = 1 + 4
    /// The length of the record version in front of the value, inside the seal.
    static let recordVersionByteCount = 8

    /// Creates a cipher for the zone whose key is `zoneKey`.
    public init(zoneKey: ZoneKey) {
        self.zoneKey = zoneKey
    }

    /// Seals `plaintext` as the value of field `fieldName` of record `recordName` (of type `recordType`) in
    /// zone `zoneName` of `ownerName`, for version `recordVersion` of the record.
    public func seal(
        _ plaintext: Data, recordVersion: UInt64, recordType: String, recordName: String, zoneName: String,
        ownerName: String, fieldName: String
    ) -> Data {
        // The version was checked when the key was made, so it fits.
        let version = UInt32(zoneKey.version)
        var sealed = Data([Self.format])
        SealedBytes.append(version, to: &sealed)
        let context = Self.context(
            format: Self.format, recordType: recordType, recordName: recordName, zoneName: zoneName,
            ownerName: ownerName, fieldName: fieldName, version: version)
        var versioned = Data(capacity: Self.recordVersionByteCount + plaintext.count)
        withUnsafeBytes(of: recordVersion.bigEndian) { versioned.append(contentsOf: $0) }
        versioned.append(plaintext)
        sealed.append(SealedBytes.seal(versioned, using: zoneKey.key, authenticating: context))
        return sealed
    }

    /// Opens a value sealed by ``seal(_:recordVersion:recordType:recordName:zoneName:ownerName:fieldName:)``
    /// for the same field of the same record (or by an earlier version, in format 1).
    ///
    /// - Throws: ``EncryptionError/Code/keyVersionMismatch`` when it was sealed with another version of the
    ///   zone key (``keyVersion(of:)`` says which); ``EncryptionError/Code/damaged`` when it does not open
    ///   (altered, truncated, or sealed for another field, record, record type or zone);
    ///   ``EncryptionError/Code/unsupportedFormat`` for a format this version does not know.
    public func open(
        _ sealed: Data, recordType: String, recordName: String, zoneName: String, ownerName: String,
        fieldName: String
    ) throws -> Opened {
        // Said only in errors, so it is built only when one needs it, not for every value opened.
        func field() -> String {
            "field '\(fieldName)' of \(recordType) record '\(recordName)' in zone '\(zoneName)' (owner '\(ownerName)')"
        }
        let bytes = [UInt8](sealed)
        let version = try Self.keyVersion(of: bytes, field: field())
        guard Int(version) == zoneKey.version else {
            throw EncryptionError(
                .keyVersionMismatch,
                "the value of \(field()) was sealed with zone key version \(version), but the key at hand is version "
                    + "\(zoneKey.version); fetch the zone's key version \(version) and open it with that")
        }
        let format = bytes[0]
        let context = Self.context(
            format: format, recordType: recordType, recordName: recordName, zoneName: zoneName, ownerName: ownerName,
            fieldName: fieldName, version: version)
        guard
            let plaintext = SealedBytes.open(
                bytes[Self.headerByteCount...], using: zoneKey.key, authenticating: context),
            format == Self.formatWithoutRecordVersion || plaintext.count >= Self.recordVersionByteCount
        else {
            throw EncryptionError(
                .damaged,
                "the value of \(field()) does not open: it was altered, damaged, or copied from another field, "
                    + "record, record type or zone; fetch the record again, or save a new value")
        }
        guard format == Self.format else { return Opened(recordVersion: 0, value: plaintext) }
        let recordVersion = plaintext.prefix(Self.recordVersionByteCount).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        // A copy, so that the value's indices start at zero as callers expect of a Data of their own.
        return Opened(recordVersion: recordVersion, value: Data(plaintext.dropFirst(Self.recordVersionByteCount)))
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
        guard format == Self.format || format == Self.formatWithoutRecordVersion else {
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

    /// The associated data of a value. Format 1 bound no record type; format 2 binds it after the format.
    static func context(
        format: UInt8, recordType: String, recordName: String, zoneName: String, ownerName: String, fieldName: String,
        version: UInt32
    ) -> AssociatedData {
        var context = AssociatedData(purpose: "SyncCrypto.field")
        context.append(format)
        if format != formatWithoutRecordVersion { context.append(recordType) }
        context.append(recordName)
        context.append(zoneName)
        context.append(ownerName)
        context.append(fieldName)
        context.append(version)
        return context
    }
}
