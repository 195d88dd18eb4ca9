import Foundation
import GRDB
import SyncKit

/// A local change not yet on the server.
public struct PendingChange: Sendable, Hashable {
    public enum Operation: String, Sendable, Hashable { case save, delete }
    public let table: String
    /// The row's key.
    public let recordName: String
    public let operation: Operation
    /// When the row changed on this device.
    public let changedAt: Date
    /// Why it is not being sent (what the server refused, until the row changes again); nil when it
    /// goes with the next send.
    public let heldBecause: String?
}

/// A fetched record that is not in its table yet, and why.
public struct UnappliedRecord: Sendable, Hashable {
    public let recordType: String
    public let recordID: RecordValue.ID
    public let reason: String
    public let receivedAt: Date

    /// How a waiting record is kept: its system fields and every field, encrypted ones opened.
    struct Stored: Codable {
        let systemFields: RecordValue.SystemFields
        let fields: ServerFields

        var record: RecordValue {
            var value = RecordValue(systemFields: systemFields)
            for (key, field) in fields.plain { value.replaceWithoutChange(field: key, by: field) }
            for (key, field) in fields.encrypted { value.replaceWithoutChange(encrypted: key, by: field) }
            return value
        }
    }
}

/// A value a conflict overwrote, kept so that nothing is lost.
public struct ConflictLogEntry: Sendable, Hashable {
    public let table: String
    public let recordName: String
    public let column: String
    /// The table's policy that decided, or `deletedOnServer` for an unsent change to a row another
    /// device deleted.
    public let policy: String
    public let kept: DatabaseValue
    public let lost: DatabaseValue
    /// Whose value was overwritten: `device` (this one's unsent change) or `server` (another device's).
    public let lostFrom: String
    public let at: Date
}

extension TableSync {
    /// Every local change not yet on the server, oldest first, with why it is held back, if it is.
    public func pendingChanges() throws -> [PendingChange] {
        try database.read { db in try Outbox.entries(db) }
    }

    /// Every fetched record waiting for its parent or its table.
    public func unappliedRecords() throws -> [UnappliedRecord] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM synctables_unapplied ORDER BY receivedAt").map { row in
                UnappliedRecord(
                    recordType: row["recordType"],
                    recordID: .init(
                        recordName: row["recordName"],
                        zoneID: .init(zoneName: row["zoneName"], ownerName: row["ownerName"])),
                    reason: row["reason"], receivedAt: Date(timeIntervalSince1970: row["receivedAt"]))
            }
        }
    }

    /// Every value a conflict overwrote, oldest first.
    public func conflictLog() throws -> [ConflictLogEntry] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM synctables_conflicts ORDER BY id").map { row in
                ConflictLogEntry(
                    table: row["tableName"], recordName: row["recordName"], column: row["columnName"],
                    policy: row["policy"], kept: row["kept"] ?? .null, lost: row["lost"] ?? .null,
                    lostFrom: row["lostFrom"], at: Date(timeIntervalSince1970: row["at"]))
            }
        }
    }
}
