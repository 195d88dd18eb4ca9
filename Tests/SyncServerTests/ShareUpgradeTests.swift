import Foundation
import GRDB
import Logging
import PostgresNIO
import SyncCore
import SyncTesting
import Testing

@testable import SyncServer

/// A server upgraded past record-hierarchy shares keeps the zone-wide shares it had: storage at the
/// schema before them (SQLite v6, PostgreSQL 3), with Ada's Family zone shared with Grace, is
/// migrated by this server, and the share, Grace's shared database and the zone's records are as
/// they were; a record-hierarchy share then works beside them.
@Suite("Upgrades: zone-wide shares made before record-hierarchy shares")
struct ShareUpgradeTests {
    /// The rows of the earlier schema, as its server wrote them (`deleted` and booleans as each
    /// backend stores them).
    private static func earlierRows(_ sql: EarlierSchema.Dialect) -> [String] {
        [
            sql.account("_ada", "ada", changeSeq: 3), sql.account("_grace", "grace", changeSeq: 0),
            """
            INSERT INTO zone (owner, zone_name, incarnation, change_seq, deleted, modified_at)
            VALUES ('_ada', 'Family', 'i1', 3, FALSE, 0)
            """,
            """
            INSERT INTO share (owner, zone_name, token, public_permission)
            VALUES ('_ada', 'Family', 'AAAAAAAAAAAAAAAAAAAAAA', 'none')
            """,
            """
            INSERT INTO share_participant (owner, zone_name, position, user_record_name, username, role, permission, status)
            VALUES ('_ada', 'Family', 0, '_ada', 'ada', 'owner', 'readWrite', 'accepted'),
                ('_ada', 'Family', 1, '_grace', 'grace', 'privateUser', 'readWrite', 'accepted')
            """,
        ]
    }

    @Test("SQLite: a file at schema 3 opens with its share, and takes record shares too")
    func sqlite() async throws {
        try await EarlierSchema.withSQLite(at: 3, rows: Self.earlierRows) { path in
            try await check(try SQLiteRecordStore(path: path))
        }
    }

    @Test(
        "PostgreSQL: a database at schema 3 is migrated with its share, and takes record shares too",
        .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
    func postgres() async throws {
        try await EarlierSchema.withPostgres(named: "share-upgrade", at: 3, rows: Self.earlierRows) { url in
            let store = try await PostgresRecordStore.connect(url: url, logger: Logger(label: "upgrade-test"))
            defer { store.close() }
            try await check(store)
        }
    }

    private func check(_ store: any RecordStore) async throws {
        let share = try #require(
            try await store.share(owner: "_ada", zoneName: "Family", recordName: Share.zoneWideRecordName))
        #expect(share.token == "AAAAAAAAAAAAAAAAAAAAAA" && share.rootRecordName == nil)
        #expect(share.participants.map(\.username) == ["ada", "grace"])
        #expect(try await store.share(token: share.token)?.recordName == Share.zoneWideRecordName)
        let zones = try await store.sharedZones(user: "_grace")
        #expect(zones.map(\.zoneID) == [RecordZone.ID(zoneName: "Family", ownerName: "_ada")])
        #expect(zones.first?.isZoneWide == true && zones.first?.permission == .readWrite)
        #expect(try await store.audience(owner: "_ada", zoneNames: ["Family"]) == ["_grace"])

        // The upgraded store takes a record-hierarchy share in another zone.
        _ = try await store.modifyZones(owner: "_ada", saves: [StoredZone(zoneName: "Lists")], deletes: [], now: Date())
        var root = RecordValue(
            recordType: "Item",
            recordID: RecordValue.ID(recordName: "Groceries", zoneID: RecordZone.ID(zoneName: "Lists")))
        root["title"] = "Groceries"
        let saved = try await store.saveShare(
            owner: "_ada", zoneName: "Lists", recordName: "share-1",
            root: ShareRoot(record: root, limits: ServerLimits()),
            now: Date()
        ) { _ in
            StoredShare(
                owner: "_ada", zoneName: "Lists", recordName: "share-1", rootRecordName: "Groceries",
                token: "BBBBBBBBBBBBBBBBBBBBBB", publicPermission: .none, invitationKey: nil, participants: [])
        }
        #expect(saved.rootRecordName == "Groceries")
        let page = try await store.zoneChanges(
            owner: "_ada", zoneName: "Lists", since: nil, limit: 10, excludingWriter: nil)
        #expect(
            page.modifications.map { "\($0.key.recordName) \($0.shareName ?? "-") \($0.shareRoot ?? "-")" }.sorted()
                == [
                    "Groceries share-1 Groceries", "share-1 - Groceries",
                ])
    }
}
