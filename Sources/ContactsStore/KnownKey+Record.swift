import ContactsModel
import Foundation
import SyncCore
import SyncCrypto
import SyncKit

/// A verification as a record, so that every device of the account knows whom the person verified: a
/// `VerifiedKey` record in the default book (which is never shared), named after the verified account,
/// whose one sealed field holds the username, the key and when it was verified. The server can neither
/// read nor forge it (sealed with the book's key), nor serve an older one to a device that saw a newer
/// (the rollback check); it can withhold it, and a device that never got it trusts that person's key on
/// first use, as before.
enum VerifiedKeyRecord {
    static let recordType = "VerifiedKey"
    private static let prefix = "verified-key."
    private static let field = "key"

    private struct Stored: Codable {
        var username: String
        var publicKey: Data
        var verifiedAt: Date
    }

    static func recordID(of userRecordName: String) -> RecordValue.ID {
        RecordValue.ID(recordName: prefix + userRecordName, zoneID: Contact.zoneID)
    }

    static func isRecord(_ recordID: RecordValue.ID) -> Bool {
        recordID.recordName.hasPrefix(prefix) && recordID.zoneID == Contact.zoneID
    }

    /// The verified account a record is named after.
    static func userRecordName(of recordID: RecordValue.ID) -> String {
        String(recordID.recordName.dropFirst(prefix.count))
    }

    /// The record of a verified key, built on its last known server record.
    static func record(_ key: KnownKey, base: RecordValue?) -> RecordValue? {
        guard let verifiedAt = key.verifiedAt else { return nil }
        var record = base ?? RecordValue(recordType: recordType, recordID: recordID(of: key.userRecordName))
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = .sortedKeys
        guard
            let bytes = try? encoder.encode(
                Stored(username: key.username, publicKey: key.publicKey, verifiedAt: verifiedAt))
        else { return nil }
        record[encrypted: field] = .bytes(bytes)
        return record
    }

    /// The verified key a record holds; nil for one that holds none.
    static func knownKey(in record: RecordValue) -> KnownKey? {
        guard record.recordType == recordType, isRecord(record.recordID),
            let bytes = record[encrypted: field]?.bytesValue
        else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        guard let stored = try? decoder.decode(Stored.self, from: bytes),
            AccountIdentityKey.isPublicKey(stored.publicKey)
        else { return nil }
        return KnownKey(
            userRecordName: userRecordName(of: record.recordID), username: stored.username,
            publicKey: stored.publicKey, verifiedAt: stored.verifiedAt)
    }
}
