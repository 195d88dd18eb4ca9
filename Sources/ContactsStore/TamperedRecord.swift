import ContactsModel
import Foundation
import SyncCore

/// A record the sync library refused as tampered (a plain value where a sealed one belongs, a sealed value
/// that does not open, an older version than this device has seen), kept on this device for inspection.
///
/// It is never merged and never sent: the device's own copy of the contact or book stays as it was. Nothing
/// of it is trusted; every text in it came from the server.
public struct TamperedRecord: Sendable, Hashable, Codable {
    /// When this device refused it.
    public var date: Date
    /// The zone (book) it arrived in.
    public var zoneName: String
    public var ownerName: String
    /// The record's name (a contact's UUID, or a book record's name) and type.
    public var recordName: String
    public var recordType: String
    /// The device the record claims saved it: its plain `device` field, if it carried one. The server sends
    /// no device ID with a record; a genuine record names its device only inside its seal.
    public var claimedDevice: String?
    /// The user the server says last saved it (its `lastModifiedUserRecordName`).
    public var claimedUser: String?
    /// What was wrong: `plainField`, `doesNotOpen` or `rollback` (the library's reason).
    public var reason: String
    /// The library's sentence saying what was wrong.
    public var message: String
    /// The record as it arrived, as the server's JSON.
    public var record: String

    /// A report of `record`, refused with `error`, at `date`.
    public init(record: RecordValue, error: SyncError, date: Date) {
        self.date = date
        zoneName = record.recordID.zoneID.zoneName
        ownerName = record.recordID.zoneID.ownerName
        recordName = record.recordID.recordName
        recordType = record.recordType
        claimedDevice = record[Contact.deviceField]?.stringValue
        claimedUser = record.lastModifiedUserRecordID?.recordName
        reason = error.reason?.rawValue ?? error.code.rawValue
        message = error.message
        var writer = JSONWriter(capacity: 512)
        writer.record(record)
        self.record = String(decoding: writer.bytes, as: UTF8.self)
    }
}
