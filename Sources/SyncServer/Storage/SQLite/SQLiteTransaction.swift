import Foundation
import GRDB
import SyncCore

/// The shared steps' reads and writes (``StoreTransaction``) in SQLite's SQL, on a `Database` inside
/// one of GRDB's transactions. The writer is one for every account, so ``lockAccount(owner:)`` only
/// reads: holding the writer is the lock.
struct SQLiteTransaction: StoreTransaction {
    let db: Database

    // MARK: The account's counters

    func lockAccount(owner: String) throws -> (current: Int64, compacted: Int64) {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT change_seq, compacted_seq FROM account WHERE user_record_name = ?"),
                arguments: [owner])
        else {
            throw SyncError.accountGone
        }
        return (row[0], row[1])
    }

    func setChangeSeq(owner: String, seq: Int64) throws {
        try db.execute(sql: "UPDATE account SET change_seq = ? WHERE user_record_name = ?", arguments: [seq, owner])
    }

    func deleteEncryptionSettings(owner: String) throws {
        try db.execute(sql: "DELETE FROM encryption_settings WHERE user_record_name = ?", arguments: [owner])
    }

    func usage(owner: String) throws -> (usedBytes: Int64, quotaBytes: Int64?) {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT used_bytes, quota_bytes FROM account WHERE user_record_name = ?"),
                arguments: [owner])
        else {
            throw SyncError.accountGone
        }
        return (row[0], row[1])
    }

    // MARK: Zones

    func zoneIsLive(owner: String, zoneName: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT deleted = 0 FROM zone WHERE owner = ? AND zone_name = ?"),
            arguments: [owner, zoneName]) == true
    }

    func liveZone(owner: String, zoneName: String) throws -> StoredZone? {
        try Row.fetchOne(
            db,
            sql:
                "SELECT zone_name, key_version, wrapped_key FROM zone WHERE owner = ? AND zone_name = ? AND deleted = 0",
            arguments: [owner, zoneName]
        ).map(Self.zone(from:))
    }

    func encryptedZoneNames(owner: String) throws -> [String] {
        try String.fetchAll(
            db,
            sql: """
                SELECT zone_name FROM zone WHERE owner = ? AND deleted = 0 AND wrapped_key IS NOT NULL
                ORDER BY zone_name
                """, arguments: [owner])
    }

    func setZoneKey(owner: String, zoneName: String, key: RecordZone.EncryptionKey, seq: Int64, at: Int64) throws {
        try db.execute(
            sql: """
                UPDATE zone SET key_version = ?, wrapped_key = ?, change_seq = ?, modified_at = ?
                WHERE owner = ? AND zone_name = ?
                """,
            arguments: [key.keyVersion, key.wrappedKey, seq, at, owner, zoneName])
    }

    func createZone(owner: String, zone: StoredZone, incarnation: String, seq: Int64, at: Int64) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO zone
                (owner, zone_name, incarnation, change_seq, deleted, deletion_reason, modified_at, key_version, wrapped_key)
                VALUES (?, ?, ?, ?, 0, NULL, ?, ?, ?)
                """,
            arguments: [
                owner, zone.zoneName, incarnation, seq, at, zone.encryptionKey?.keyVersion,
                zone.encryptionKey?.wrappedKey,
            ])
    }

    func markZoneDeleted(owner: String, zoneName: String, reason: ZoneDeletionReason, seq: Int64, at: Int64) throws {
        try db.execute(
            sql: """
                UPDATE zone SET deleted = 1, deletion_reason = ?, change_seq = ?, modified_at = ?,
                    key_version = NULL, wrapped_key = NULL
                WHERE owner = ? AND zone_name = ?
                """,
            arguments: [reason.rawValue, seq, at, owner, zoneName])
    }

    func setZoneChangeSeq(owner: String, zoneName: String, seq: Int64, at: Int64) throws {
        try db.execute(
            sql: "UPDATE zone SET change_seq = ?, modified_at = ? WHERE owner = ? AND zone_name = ?",
            arguments: [seq, at, owner, zoneName])
    }

    func deletedZonesWithRecords(owner: String?) throws -> [(owner: String, zoneName: String)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT owner, zone_name FROM zone
                WHERE deleted = 1 AND (? IS NULL OR owner = ?) AND EXISTS (
                    SELECT 1 FROM record WHERE record.owner = zone.owner AND record.zone_name = zone.zone_name)
                """, arguments: [owner, owner]
        ).map { (owner: $0[0], zoneName: $0[1]) }
    }

    func deleteRecordRows(owner: String, zoneName: String, fromSeq: Int64, limit: Int?) throws -> (
        count: Int, lastSeq: Int64
    ) {
        let seqs = try Int64.fetchAll(
            db,
            sql: """
                DELETE FROM record WHERE rowid IN (
                    SELECT rowid FROM record WHERE owner = ? AND zone_name = ? AND seq >= ? ORDER BY seq LIMIT ?)
                RETURNING seq
                """, arguments: [owner, zoneName, fromSeq, limit ?? -1])
        return (seqs.count, seqs.max() ?? fromSeq)
    }

    // MARK: Usage

    func storedSizes(owner: String, keys: [RecordKey]) throws -> [RecordKey: Int64] {
        let lengths = try db.cachedStatement(
            sql: """
                SELECT record_name, length(fields) FROM record
                WHERE owner = ? AND zone_name = ? AND record_name IN (SELECT value FROM json_each(?))
                """)
        var sizes: [RecordKey: Int64] = [:]
        for (zoneName, zoneKeys) in Dictionary(grouping: keys, by: \.zoneName) {
            let rows = try Row.fetchCursor(
                lengths, arguments: [owner, zoneName, Self.jsonList(zoneKeys, \.recordName)])
            while let row = try rows.next() { sizes[RecordKey(zoneName: zoneName, recordName: row[0])] = row[1] }
        }
        return sizes
    }

    func addUsage(owner: String, zoneName: String, bytes: Int64) throws {
        try db.execute(
            sql: "UPDATE zone SET used_bytes = used_bytes + ? WHERE owner = ? AND zone_name = ?",
            arguments: [bytes, owner, zoneName])
    }

    func addUsage(owner: String, bytes: Int64) throws {
        try db.execute(
            sql: "UPDATE account SET used_bytes = used_bytes + ? WHERE user_record_name = ?", arguments: [bytes, owner])
    }

    func uncountZone(owner: String, zoneName: String) throws {
        try db.execute(
            sql: """
                UPDATE account SET used_bytes = used_bytes - COALESCE(
                    (SELECT used_bytes FROM zone WHERE owner = ? AND zone_name = ?), 0)
                WHERE user_record_name = ?
                """, arguments: [owner, zoneName, owner])
        try db.execute(
            sql: "UPDATE zone SET used_bytes = 0 WHERE owner = ? AND zone_name = ?", arguments: [owner, zoneName])
    }

    // MARK: Records

    /// One query per zone: a statement run per key cost more than finding the rows (most keys of an
    /// upload have none).
    func storedRecords(owner: String, keys: [RecordKey]) throws -> [RecordKey: StoredRecord] {
        let lookup = try db.cachedStatement(
            sql: """
                SELECT \(StoredRecord.columns) FROM record
                WHERE owner = ? AND zone_name = ? AND record_name IN (SELECT value FROM json_each(?))
                """)
        var found: [RecordKey: StoredRecord] = [:]
        for (zoneName, zoneKeys) in Dictionary(grouping: keys, by: \.zoneName) {
            let rows = try Row.fetchCursor(lookup, arguments: [owner, zoneName, Self.jsonList(zoneKeys, \.recordName)])
            while let row = try rows.next() {
                let record = Self.record(from: row)
                found[record.key] = record
            }
        }
        return found
    }

    func storedRecord(owner: String, key: RecordKey, live: Bool) throws -> StoredRecord? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT \(StoredRecord.columns) FROM record
                    WHERE owner = ? AND zone_name = ? AND record_name = ? AND (deleted = 0 OR NOT ?)
                    """), arguments: [owner, key.zoneName, key.recordName, live]
        ).map(Self.record(from:))
    }

    func writeRecordRows(_ rows: [StoredRecord], owner: String) throws {
        try SQLiteRecordStore.writeRows(rows, owner: owner, db)
    }

    func requestAnswer(owner: String, requestID: String) throws -> (bodyHash: Data, response: Data)? {
        try Row.fetchOne(
            db, sql: "SELECT body_hash, response FROM client_request WHERE owner = ? AND request_id = ?",
            arguments: [owner, requestID]
        ).map { ($0[0], $0[1]) }
    }

    func saveRequestAnswer(owner: String, requestID: String, bodyHash: Data, response: Data, at: Int64) throws {
        try db.execute(
            sql:
                "INSERT INTO client_request (owner, request_id, body_hash, response, created_at) VALUES (?, ?, ?, ?, ?)",
            arguments: [owner, requestID, bodyHash, response, at])
    }

    // MARK: Assets

    func asset(id: String, forUpdate: Bool) throws -> StoredAsset? {
        try Row.fetchOne(db, sql: "SELECT * FROM asset WHERE id = ?", arguments: [id]).map(Self.asset(from:))
    }

    /// (None for an empty list, without a query.)
    func assets(ids: [String]) throws -> [String: StoredAsset] {
        guard !ids.isEmpty else { return [:] }
        let rows = try Row.fetchAll(
            db, sql: "SELECT * FROM asset WHERE id IN (SELECT value FROM json_each(?))",
            arguments: [Self.jsonList(ids) { $0 }])
        return Dictionary(uniqueKeysWithValues: rows.map(Self.asset(from:)).map { ($0.id, $0) })
    }

    func insertAsset(id: String, uploader: String, size: Int64, at: Int64) throws {
        try db.execute(
            sql: "INSERT INTO asset (id, uploader, size, created_at) VALUES (?, ?, ?, ?)",
            arguments: [id, uploader, size, at])
    }

    func attachAssets(_ ids: [String], to place: AssetPlace, at: Int64) throws {
        let named = Self.jsonList(ids) { $0 }
        try db.execute(
            sql: """
                UPDATE asset SET detached_at = ?
                WHERE owner = ? AND zone_name = ? AND record_name = ? AND detached_at IS NULL
                    AND id NOT IN (SELECT value FROM json_each(?))
                """,
            arguments: [at, place.owner, place.key.zoneName, place.key.recordName, named])
        try db.execute(
            sql: """
                UPDATE asset SET owner = ?, zone_name = ?, record_name = ?, detached_at = NULL
                WHERE id IN (SELECT value FROM json_each(?))
                """, arguments: [place.owner, place.key.zoneName, place.key.recordName, named])
    }

    // MARK: History

    func raiseCompactedSeqs(before cutoff: Int64) throws {
        try db.execute(
            sql: """
                UPDATE account SET compacted_seq = MAX(compacted_seq,
                    COALESCE((SELECT MAX(seq) FROM record WHERE owner = user_record_name AND deleted = 1 AND modified_at < ?1), 0),
                    COALESCE((SELECT MAX(change_seq) FROM zone WHERE owner = user_record_name AND deleted = 1 AND modified_at < ?1), 0),
                    COALESCE((SELECT MAX(seq) FROM share_membership WHERE owner = user_record_name AND created_at < ?1), 0))
                """,
            arguments: [cutoff])
    }

    func deleteMembershipChanges(before cutoff: Int64) throws {
        try db.execute(sql: "DELETE FROM share_membership WHERE created_at < ?", arguments: [cutoff])
    }

    func deleteTombstones(before cutoff: Int64) throws -> Int {
        try db.execute(sql: "DELETE FROM record WHERE deleted = 1 AND modified_at < ?", arguments: [cutoff])
        var removed = db.changesCount
        try db.execute(sql: "DELETE FROM zone WHERE deleted = 1 AND modified_at < ?", arguments: [cutoff])
        removed += db.changesCount
        return removed
    }

    func deleteRequestAnswers(before cutoff: Int64) throws {
        try db.execute(sql: "DELETE FROM client_request WHERE created_at < ?", arguments: [cutoff])
    }

    // MARK: Rows

    /// The strings of `items` as a JSON array: the one argument of `IN (SELECT value FROM json_each(?))`,
    /// so that one statement takes any number of names.
    static func jsonList<Items: Collection>(_ items: Items, _ string: (Items.Element) -> String) -> String {
        var list = JSONWriter(capacity: 40 * items.count + 2)
        list.array(items) { $0.string(string($1)) }
        return String(decoding: list.bytes, as: UTF8.self)
    }

    private static func asset(from row: Row) -> StoredAsset {
        let owner: String? = row["owner"]
        return StoredAsset(
            id: row["id"], uploader: row["uploader"], size: row["size"], received: row["received"],
            createdAt: Date(millisecondsSince1970: row["created_at"]),
            record: owner.map {
                AssetPlace(owner: $0, key: RecordKey(zoneName: row["zone_name"], recordName: row["record_name"]))
            },
            detachedAt: (row["detached_at"] as Int64?).map(Date.init(millisecondsSince1970:)))
    }

    /// The record in a row of ``StoredRecord/columns``, read by position: finding a column by name
    /// costs a case-insensitive comparison of every name, which a page of 400 rows felt.
    static func record(from row: Row) -> StoredRecord {
        StoredRecord(
            key: RecordKey(zoneName: row[0], recordName: row[1]), recordType: row[2], fields: row[3],
            changeTag: row[4], createdAt: row[5], creator: row[6], modifiedAt: row[7], modifier: row[8], seq: row[9],
            isDeleted: row[10], parentName: row[11], shareName: row[12], shareRoot: row[13])
    }

    /// A zone row (`zone_name`, `key_version`, `wrapped_key`).
    static func zone(from row: Row) -> StoredZone {
        StoredZone(zoneName: row["zone_name"], keyVersion: row["key_version"], wrappedKey: row["wrapped_key"])
    }
}
