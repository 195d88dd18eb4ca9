import Foundation
import GRDB
import Logging
import PostgresNIO
import SyncCore
import SyncTesting
import Testing

@testable import SyncServer

/// A server upgraded to key pairs and participants' shared keys keeps what was stored before: storage at
/// the schema before them (version 7) with encryption settings, a keyed zone and a share
/// whose participant accepted with an own slot is migrated by this server; nothing is lost, the new
/// columns start empty, and a key pair and a shared key can then be stored.
@Suite("Upgrades: encryption settings and shares made before key pairs")
struct KeyPairUpgradeTests {
    private static func earlierRows(_ sql: EarlierSchema.Dialect) -> [String] {
        let (no, blob) = (sql.no, sql.blob as ([UInt8]) -> String)
        return [
            sql.account("_ada", "ada", changeSeq: 1), sql.account("_grace", "grace", changeSeq: 0),
            """
            INSERT INTO encryption_settings
                (user_record_name, salt, cost_n, block_size_r, parallelism_p, key_version, verifier, created_at)
            VALUES ('_ada', \(blob(Array(repeating: 7, count: 16))), 1024, 8, 1, 1, \(blob([1, 2, 3])), 0)
            """,
            """
            INSERT INTO zone (owner, zone_name, incarnation, change_seq, deleted, modified_at, key_version, wrapped_key)
            VALUES ('_ada', 'Family', 'i1', 1, \(no), 0, 1, \(blob([9, 9, 9])))
            """,
            """
            INSERT INTO share (owner, zone_name, record_name, token, public_permission)
            VALUES ('_ada', 'Family', 'cloudkit.zoneshare', 'AAAAAAAAAAAAAAAAAAAAAA', 'none')
            """,
            """
            INSERT INTO share_participant (owner, zone_name, share_name, position, user_record_name, username, role,
                permission, status, key_version, wrapped_key)
            VALUES ('_ada', 'Family', 'cloudkit.zoneshare', 0, '_ada', 'ada', 'owner', 'readWrite', 'accepted', NULL, NULL),
                ('_ada', 'Family', 'cloudkit.zoneshare', 1, '_grace', 'grace', 'privateUser', 'readWrite', 'accepted',
                1, \(blob([5, 5, 5])))
            """,
        ]
    }

    @Test("SQLite: a file at schema 7 keeps its settings, keys and slots, and takes a key pair and shared keys")
    func sqlite() async throws {
        try await EarlierSchema.withSQLite(at: 7, rows: Self.earlierRows) { path in
            try await check(try SQLiteRecordStore(path: path))
        }
    }

    @Test(
        "PostgreSQL: a database at schema 7 keeps its settings, keys and slots, and takes a key pair and shared keys",
        .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
    func postgres() async throws {
        try await EarlierSchema.withPostgres(named: "keypair-upgrade", at: 7, rows: Self.earlierRows) { url in
            let store = try await PostgresRecordStore.connect(url: url, logger: Logger(label: "upgrade-test"))
            defer { store.close() }
            try await check(store)
        }
    }

    private func check(_ store: any RecordStore) async throws {
        let settings = try #require(try await store.encryptionSettings(owner: "_ada"))
        #expect(settings.salt == Data(repeating: 7, count: 16) && settings.keyVersion == 1 && settings.keyPair == nil)
        #expect(try await store.zones(owner: "_ada").first?.encryptionKey?.wrappedKey == Data([9, 9, 9]))
        var zone = try #require(try await store.sharedZones(user: "_grace").first)
        #expect(zone.encryptionKey == RecordZone.EncryptionKey(keyVersion: 1, wrappedKey: Data([5, 5, 5])))
        #expect(zone.sharedKey == nil)

        let pair = AccountKeyPair(publicKey: Data(repeating: 4, count: 32), wrappedPrivateKey: Data([4]))
        #expect(try await store.createKeyPair(owner: "_ada", pair) == .created)
        #expect(try await store.publicKey(owner: "_ada") == pair.publicKey)

        let shared = RecordZone.EncryptionKey(keyVersion: 2, wrappedKey: Data([6, 6]))
        let saved = try await store.saveShare(
            owner: "_ada", zoneName: "Family", recordName: Share.zoneWideRecordName, root: nil, now: Date()
        ) { existing in
            var share = try #require(existing)
            share.participants[1].sharedKey = shared
            return share
        }
        #expect(saved.participants.map(\.status) == [.accepted, .accepted])
        zone = try #require(try await store.sharedZones(user: "_grace").first)
        #expect(zone.sharedKey == shared && zone.encryptionKey?.wrappedKey == Data([5, 5, 5]))
    }
}
