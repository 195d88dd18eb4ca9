import Foundation
import Logging
import SyncCore
import SyncTesting
import Testing

@testable import SyncServer

/// A server upgraded to reference actions performs them on what was stored before: storage at schema 9,
/// with a chain of deleteSelf references (one in a list) and a `none` reference, is migrated by this
/// server, whose index then finds them; deleting the chain's first record deletes the others.
@Suite("Upgrades: deleteSelf references stored before reference actions")
struct ReferenceUpgradeTests {
    /// Trip; Day 1, which references it with deleteSelf; Photo, with a list holding a deleteSelf
    /// reference to Day 1; Guide, with a `none` reference to Trip. Stored fields, as schema 9 kept them.
    private static let fields: [(name: String, fields: Data)] = {
        func reference(_ name: String, _ action: RecordValue.Reference.Action) -> FieldValue {
            .reference(
                RecordValue.Reference(
                    recordID: RecordValue.ID(recordName: name, zoneID: RecordZone.ID(zoneName: "Contacts")),
                    action: action))
        }
        return [
            ("Trip", FieldCoding.encode(["text": .string("Trip")])),
            ("Day 1", FieldCoding.encode(["trip": reference("Trip", .deleteSelf)])),
            ("Photo", FieldCoding.encode(["days": .list([reference("Day 1", .deleteSelf)])])),
            ("Guide", FieldCoding.encode(["trip": reference("Trip", .none)])),
        ]
    }()

    private static var totalBytes: Int { fields.map(\.fields.count).reduce(0, +) }

    private static func earlierRows(_ sql: EarlierSchema.Dialect) -> [String] {
        var rows = [
            sql.account("_ada", "ada", changeSeq: fields.count + 1),
            "UPDATE account SET used_bytes = \(totalBytes) WHERE user_record_name = '_ada'",
            """
            INSERT INTO zone (owner, zone_name, incarnation, change_seq, deleted, modified_at, used_bytes)
            VALUES ('_ada', 'Contacts', 'i1', \(fields.count), \(sql.no), 0, \(totalBytes))
            """,
        ]
        for (seq, record) in fields.enumerated() {
            rows.append(
                """
                INSERT INTO record (owner, zone_name, record_name, record_type, fields, change_tag, created_at,
                    creator, modified_at, modifier, seq, deleted)
                VALUES ('_ada', 'Contacts', '\(record.name)', 'Note', \(sql.blob(Array(record.fields))), '\(seq + 1)',
                    0, '_ada', 0, '_ada', \(seq + 1), \(sql.no))
                """)
        }
        return rows
    }

    @Test(
        "SQLite: a file at schema 9 opens with its deleteSelf references indexed, and deleting Trip deletes its chain")
    func sqlite() async throws {
        try await EarlierSchema.withSQLite(at: 9, rows: Self.earlierRows) { path in
            try await check(try SQLiteRecordStore(path: path))
        }
    }

    @Test(
        "PostgreSQL: a database at schema 9 is migrated with its deleteSelf references indexed, and deleting Trip deletes its chain",
        .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
    func postgres() async throws {
        try await EarlierSchema.withPostgres(named: "reference-upgrade", at: 9, rows: Self.earlierRows) { url in
            let store = try await PostgresRecordStore.connect(url: url, logger: Logger(label: "upgrade-test"))
            defer { store.close() }
            try await check(store)
        }
    }

    private func check(_ store: any RecordStore) async throws {
        let trip = RecordValue.ID(recordName: "Trip", zoneID: RecordZone.ID(zoneName: "Contacts"))
        let outcome = try await store.modifyRecords(
            owner: "_ada", modifier: "_ada", writer: "", request: ModifyRecordsRequest(deletes: [trip]),
            limits: ServerLimits(), now: Date())
        #expect(outcome.changed)
        let found = try await store.lookupRecords(
            owner: "_ada",
            keys: ["Trip", "Day 1", "Photo", "Guide"].map { RecordKey(zoneName: "Contacts", recordName: $0) }
        ).items.map { item -> String in
            if case .found(let record) = item { return record.key.recordName }
            return "-"
        }
        #expect(found == ["-", "-", "-", "Guide"], "Day 1 and Photo went with Trip; Guide's reference is none")
        let guideBytes = Int64(try #require(Self.fields.last).fields.count)
        #expect(try await store.storageUsage(owner: "_ada").usedBytes == guideBytes)
    }
}
