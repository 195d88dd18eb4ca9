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
    private static func earlierRows(postgres: Bool) -> [String] {
        let account =
            postgres
            ? "INSERT INTO account (user_record_name, username, username_folded, password_hash, created_at, change_seq) VALUES"
            : "INSERT INTO account (user_record_name, username, password_hash, created_at, change_seq) VALUES"
        let fold = { (name: String) in postgres ? "'\(name)', " : "" }
        let (yes, no) = postgres ? ("TRUE", "FALSE") : ("1", "0")
        func blob(_ text: String) -> String {
            let hex = text.utf8.map { String(format: "%02x", $0) }.joined()
            return postgres ? "'\\x\(hex)'::bytea" : "X'\(hex)'"
        }
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
            "\(account) ('_ada', 'ada', \(fold("ada"))'x', 0, 6), ('_grace', 'grace', \(fold("grace"))'x', 0, 1)",
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

    @Test("SQLite: a file at schema v7 opens with each account's usage counted from its records")
    func sqlite() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("upgrade-\(UUID()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        do {
            let earlier = try DatabaseQueue(path: path)
            try SQLiteRecordStore.migrator.migrate(earlier, upTo: "v7: record hierarchies and record-hierarchy shares")
            try await earlier.write { db in
                for statement in Self.earlierRows(postgres: false) { try db.execute(sql: statement) }
            }
        }
        try await check(try SQLiteRecordStore(path: path, defaultQuotaBytes: 1_000))
    }

    @Test(
        "PostgreSQL: a database at schema 4 is migrated with each account's usage counted from its records",
        .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
    func postgres() async throws {
        let logger = Logger(label: "upgrade-test")
        let name = TestPostgres.databaseName(for: "quota-upgrade-\(UUID())")
        try await TestPostgres.createDatabase(name)
        do {
            let url = try TestPostgres.url(database: name)
            try await PostgresEarlierSchema.make(
                url: url, version: 4, rows: Self.earlierRows(postgres: true), logger: logger)
            let store = try await PostgresRecordStore.connect(url: url, logger: logger, defaultQuotaBytes: 1_000)
            defer { store.close() }
            try await check(store)
            try await TestPostgres.dropDatabase(name)
        } catch {
            try? await TestPostgres.dropDatabase(name)
            throw error
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
