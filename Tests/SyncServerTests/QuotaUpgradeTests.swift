import Foundation
import GRDB
import Logging
import PostgresNIO
import SyncCore
import SyncTesting
import Testing

@testable import SyncServer

/// A server upgraded to storage quotas counts what was stored before: storage at the schema before
/// them (SQLite v7, PostgreSQL 4) with records in two accounts' zones, a deleted zone and tombstones,
/// is migrated by this server, and each account's usage is the sum of its live records' fields.
@Suite("Upgrades: usage of what was stored before quotas")
struct QuotaUpgradeTests {
    /// Rows as the earlier server wrote them: Ada's two zones with records (one deleted record, a
    /// tombstone), Grace's one, and a deleted zone of Ada's. Fields of 11, 25, 7 and 40 bytes.
    private static func earlierRows(_ sql: EarlierSchema.Dialect) -> [String] {
        let (yes, no) = (sql.yes, sql.no)
        let blob = sql.blob as (String) -> String
        func record(_ owner: String, _ zone: String, _ name: String, _ fields: String, deleted: Bool, seq: Int)
            -> String
        {
            """
            INSERT INTO record (owner, zone_name, record_name, record_type, fields, change_tag, created_at, creator,
                modified_at, modifier, seq, deleted)
            VALUES ('\(owner)', '\(zone)', '\(name)', 'Note', \(blob(fields)), '\(seq)', 0, '\(owner)', 0, '\(owner)',
                \(seq), \(deleted ? yes : no))
            """
        }
        return [
            sql.account("_ada", "ada", changeSeq: 6), sql.account("_grace", "grace", changeSeq: 1),
            """
            INSERT INTO zone (owner, zone_name, incarnation, change_seq, deleted, modified_at) VALUES
                ('_ada', 'Contacts', 'i1', 4, \(no), 0), ('_ada', 'Notes', 'i2', 5, \(no), 0),
                ('_ada', 'Gone', 'i3', 6, \(yes), 0), ('_grace', 'Contacts', 'i4', 1, \(no), 0)
            """,
            record("_ada", "Contacts", "a", String(repeating: "v", count: 11), deleted: false, seq: 1),
            record("_ada", "Contacts", "b", String(repeating: "y", count: 25), deleted: false, seq: 2),
            record("_ada", "Contacts", "c", "", deleted: true, seq: 3),
            record("_ada", "Notes", "d", String(repeating: "z", count: 7), deleted: false, seq: 4),
            record("_grace", "Contacts", "e", String(repeating: "w", count: 40), deleted: false, seq: 1),
        ]
    }

    @Test("SQLite: a file at schema 4 opens with each account's usage counted from its records")
    func sqlite() async throws {
        try await EarlierSchema.withSQLite(at: 4, rows: Self.earlierRows) { path in
            try await check(try SQLiteRecordStore(path: path, defaultQuotaBytes: 1_000))
        }
    }

    @Test(
        "PostgreSQL: a database at schema 4 is migrated with each account's usage counted from its records",
        .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
    func postgres() async throws {
        try await EarlierSchema.withPostgres(named: "quota-upgrade", at: 4, rows: Self.earlierRows) { url in
            let store = try await PostgresRecordStore.connect(
                url: url, logger: Logger(label: "upgrade-test"), defaultQuotaBytes: 1_000)
            defer { store.close() }
            try await check(store)
        }
    }

    private func check(_ store: any RecordStore) async throws {
        #expect(try await store.storageUsage(owner: "_ada") == StorageUsage(usedBytes: 11 + 25 + 7, limitBytes: 1_000))
        #expect(try await store.storageUsage(owner: "_grace") == StorageUsage(usedBytes: 40, limitBytes: 1_000))
        #expect(
            try await store.accountStorage(username: nil).map(\.usedBytes) == [43, 40], "ada, then grace")
        // Counting goes on from there: deleting the Notes zone takes its 7 bytes off at once.
        _ = try await store.modifyZones(owner: "_ada", saves: [], deletes: ["Notes"], now: Date())
        #expect(try await store.storageUsage(owner: "_ada").usedBytes == 36)
    }
}
