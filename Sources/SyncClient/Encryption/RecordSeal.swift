import Foundation
import SyncCore
import SyncCrypto

/// How a record's encrypted values are sealed into its fields and opened back: each value sealed for its
/// field, record, record type and zone, with the record's version inside every seal.
///
/// The keyring finds the keys; this finds nothing and asks nothing of the network.
enum RecordSeal {
    /// The version a save seals: one above the record it was built on (its last known server record), 1 for
    /// a new record. A save built on a conflict's server record therefore goes above it.
    static func nextVersion(after record: RecordValue) -> UInt64 {
        let base = record.sealedVersion ?? 0
        return base == .max ? .max : base + 1
    }

    /// `record` with its encrypted values sealed into `encrypted` fields with `cipher`, and the version sealed
    /// as its ``RecordValue/sealedVersion``. For a `declared` type every sealed field is marked changed, so
    /// that a `changedKeys` save leaves no field of an older version beside the new ones.
    static func seal(_ record: RecordValue, with cipher: FieldCipher, declared: Bool) -> RecordValue {
        let version = nextVersion(after: record)
        let zoneID = record.recordID.zoneID
        var sealed = record
        for (key, value) in record.encryptedValues {
            var writer = JSONWriter(capacity: 64)
            writer.fieldValue(value)
            let ciphertext = cipher.seal(
                Data(writer.bytes), recordVersion: version, recordType: record.recordType,
                recordName: record.recordID.recordName, zoneName: zoneID.zoneName,
                ownerName: Keyring.sealingOwnerName, fieldName: key)
            sealed.replaceWithoutChange(encrypted: key, by: nil)
            if declared {
                sealed[key] = .encrypted(ciphertext)
            } else {
                sealed.replaceWithoutChange(field: key, by: .encrypted(ciphertext))
            }
        }
        for (key, value) in record.fields where value.namesAsset {
            let assetsSealed = value.mappingAssets { reference in
                guard let local = reference.key.flatMap(LocalAssetKey.init), case .opened = local else {
                    return reference
                }
                var reference = reference
                reference.key = cipher.seal(
                    local.content, recordVersion: version, recordType: record.recordType,
                    recordName: record.recordID.recordName, zoneName: zoneID.zoneName,
                    ownerName: Keyring.sealingOwnerName, fieldName: assetKeyField(key))
                return reference
            }
            if declared {
                sealed[key] = assetsSealed
            } else {
                sealed.replaceWithoutChange(field: key, by: assetsSealed)
            }
        }
        sealed.sealedVersion = version
        return sealed
    }

    /// Opens one sealed value of `record` (a field's, or an asset's key) sealed for `fieldName`: a value that
    /// does not open for its place is `recordTampered`, saying `what` it was; a key version the value names
    /// but the zone's keys say otherwise is this device's problem, `internalError`.
    private static func openSealed(
        _ sealed: Data, of record: RecordValue, fieldName: String, what: String,
        cipher: (_ keyVersion: Int) async throws -> FieldCipher
    ) async throws -> FieldCipher.Opened {
        do {
            return try await cipher(try FieldCipher.keyVersion(of: sealed)).open(
                sealed, recordType: record.recordType, recordName: record.recordID.recordName,
                zoneName: record.recordID.zoneID.zoneName, ownerName: Keyring.sealingOwnerName, fieldName: fieldName)
        } catch let error as EncryptionError where error.code == .keyVersionMismatch {
            throw SyncError(
                .internalError, "the \(what) of \(record.recordID) does not open: \(error.message)")
        } catch let error as EncryptionError {
            throw SyncError.tampered(
                record.recordID, recordType: record.recordType, .doesNotOpen,
                "its \(what) does not open here: \(error.message)")
        }
    }

    /// What an asset's key is sealed for: its field, apart from any value sealed in the field itself.
    private static func assetKeyField(_ key: String) -> String { "\(key)#asset" }

    /// Whether `record` holds anything to seal before it leaves: encrypted values, or an asset's opened key.
    static func needsSealing(_ record: RecordValue) -> Bool {
        !record.encryptedValues.isEmpty
            || record.fields.values.contains { value in
                value.assetReferences.contains { reference in
                    if let key = reference.key, case .opened = LocalAssetKey(key) { true } else { false }
                }
            }
    }

    /// Whether `record` holds any sealed value: an encrypted value, or an asset's key.
    static func hasSealedFields(_ record: RecordValue) -> Bool {
        record.fields.values.contains { $0.encryptedValue != nil || $0.assetReferences.contains { $0.key != nil } }
    }

    /// `record` as it arrived with its sealed fields opened into its encrypted values, and the version they
    /// were sealed for as its ``RecordValue/sealedVersion`` (the highest, for an undeclared type whose
    /// `changedKeys` saves may mix versions).
    ///
    /// - Parameter cipher: the cipher for a zone key version (the keyring's: a missing version is its error).
    /// - Throws: `recordTampered` (``SyncError/Reason/doesNotOpen``) for a value that does not open for its
    ///   place, or, for a `declared` type, seals that disagree on the record's version; the error of `cipher`
    ///   when there is no key for a value's version.
    static func open(
        _ record: RecordValue, declared: Bool, cipher: (_ keyVersion: Int) async throws -> FieldCipher
    ) async throws -> RecordValue {
        var opened = record
        var versions: Set<UInt64> = []
        // Sorted: the same record fails on the same field each time it is reported.
        for key in record.fields.keys.sorted() {
            guard let ciphertext = record.fields[key]?.encryptedValue else { continue }
            let plaintext = try await openSealed(
                ciphertext, of: record, fieldName: key, what: "sealed field '\(key)'", cipher: cipher)
            let value = try JSONReader.decode(FieldValue.self, from: plaintext.value)
            opened.replaceWithoutChange(field: key, by: nil)
            opened.replaceWithoutChange(encrypted: key, by: value)
            versions.insert(plaintext.recordVersion)
        }
        for key in record.fields.keys.sorted() {
            guard let value = record.fields[key], value.namesAsset else { continue }
            let assetsOpened = try await value.mappingAssetsAsync({ reference in
                guard let sealed = reference.key else { return reference }
                let plaintext = try await openSealed(
                    sealed, of: record, fieldName: assetKeyField(key),
                    what: "key of its asset '\(reference.assetID)' in field '\(key)'", cipher: cipher)
                guard let local = LocalAssetKey.openedContent(plaintext.value),
                    case .opened(let assetID, _) = local, assetID == reference.assetID
                else {
                    throw SyncError.tampered(
                        record.recordID, recordType: record.recordType, .doesNotOpen,
                        "the key of its asset '\(reference.assetID)' in field '\(key)' is another asset's")
                }
                versions.insert(plaintext.recordVersion)
                var reference = reference
                reference.key = local.encoded
                return reference
            })
            opened.replaceWithoutChange(field: key, by: assetsOpened)
        }
        if declared, versions.count > 1 {
            throw SyncError.tampered(
                record.recordID, recordType: record.recordType, .doesNotOpen,
                "its sealed fields carry different versions of the record ("
                    + versions.sorted().map(String.init).joined(separator: ", ")
                    + "), as when a field is swapped for an older one; a device of this account seals them together")
        }
        opened.sealedVersion = versions.max()
        return opened
    }
}
