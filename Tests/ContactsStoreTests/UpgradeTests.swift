import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import GRDB
import SyncKit
import SyncServer
import SyncTesting
import Testing

/// Data written by an earlier release opens and syncs with this one, unchanged and without loss.
///
/// `Fixtures/upgrade-from-4357571` was made by the release build of commit 4357571 (before the
/// binary contact format and the hand-written record JSON), with its own server:
/// `contacts --device laptop account signup --username ada` (password `fixture-password`,
/// passphrase `fixture passphrase`), `import Assets/sample-contacts.vcf` (37 cards, synced), then,
/// offline (`--no-sync`): `add --name "Grace Hopper" …`, `edit B8468D44 --note "Edited offline before
/// the upgrade"` (Ada Lovelace) and `delete 5D307800` (Example Bakery). The laptop's store holds the
/// contacts in the first JSON form, three changes in its outbox and the engine's state; the server's
/// file holds the account, its encrypted zone and the 37 synced records.
@Suite("Upgrades: a store and server of an earlier release")
struct UpgradeTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/upgrade-from-4357571")
    /// When the fixture was made: the server's clock starts there, so the laptop's session is as fresh
    /// as it was (sessions end 90 days after their last request).
    static let madeAt = Date(timeIntervalSince1970: 1_795_438_420)  // 2026-11-23 12:53:40 UTC

    @Test("contacts, pending edits and engine state survive; the sync sends the edits and a new device gets all")
    func storeAndServerOfAnEarlierRelease() async throws {
        try await withTemporaryDirectory { directory in
            let devices = directory + "/devices"
            try FileManager.default.createDirectory(atPath: devices, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: Self.fixture.appendingPathComponent("laptop.sqlite").path, toPath: devices + "/laptop.sqlite")
            let serverFile = directory + "/server.sqlite"
            try FileManager.default.copyItem(
                atPath: Self.fixture.appendingPathComponent("server.sqlite").path, toPath: serverFile)
            var configuration = SyncServerConfiguration.testing
            configuration.clock = ServerClock(TestClock(), startingAt: Self.madeAt)
            let server = try await TestServer.start(configuration: configuration, storagePath: serverFile)
            do {
                let laptop = try openDevice("laptop", directory: directory, server: server)
                #expect(laptop.isSignedIn)
                #expect(try laptop.store.count() == 37)
                // The last known server records moved to a table without row IDs (migration v12), every one
                // kept: the 37 synced less the one deleted offline (its record waits for the delete to go).
                #expect(try laptop.store.contacts().filter { try laptop.store.serverRecord($0.id) != nil }.count == 36)
                // The migrated file, read beside the device for what its API does not show.
                let file = try DatabaseQueue(path: devices + "/laptop.sqlite")
                let table = try await file.read { db in
                    try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'serverRecord'")
                }
                #expect(table?.hasSuffix("WITHOUT ROWID") == true)
                // The list's index is by sort key alone (migration v13); contacts of one name still list by ID.
                let sortColumns = try await file.read { db in
                    try String.fetchAll(db, sql: "SELECT name FROM pragma_index_info('contactSort')")
                }
                #expect(sortColumns == ["sortKey"])
                // Contacts are keyed by their UUIDs' 16 bytes, and named by their rows (migration v14): no
                // column of names, no key left as text, and the list's names are the contacts' own.
                let (columns, keyTypes) = try await file.read { db in
                    (
                        try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('contact')"),
                        try String.fetchAll(
                            db,
                            sql: """
                                SELECT DISTINCT typeof(id) || ' ' || length(id) FROM contact
                                UNION SELECT DISTINCT typeof(id) || ' ' || length(id) FROM serverRecord
                                """)
                    )
                }
                #expect(!columns.contains("name") && columns.contains("json"))
                #expect(keyTypes == ["blob 16"])
                // Vacuumed once after v14: no free pages left by the old table, and auto-vacuum from now on.
                let (autoVacuum, free) = try await file.read { db in
                    (
                        try Int.fetchOne(db, sql: "PRAGMA auto_vacuum"),
                        try Int.fetchOne(db, sql: "PRAGMA freelist_count")
                    )
                }
                #expect(autoVacuum == 2 && free == 0)
                #expect(
                    try laptop.store.summaries().map(\.name).sorted()
                        == laptop.store.contacts().map(\.name).sorted())
                let graces = try laptop.store.summaries().filter { $0.name == "Grace Hopper" }.map(\.id.uuidString)
                #expect(graces.count == 2 && graces == graces.sorted())
                #expect(try laptop.store.pendingCount() == 3, "the add, the edit and the delete made offline")
                // The outbox was copied into a table without row IDs (v15), its entries as they were.
                let (outboxSQL, kinds) = try await file.read { db in
                    (
                        try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'outbox'") ?? "",
                        try String.fetchAll(db, sql: "SELECT kind || ' ' || version FROM outbox ORDER BY kind")
                    )
                }
                #expect(outboxSQL.hasSuffix("WITHOUT ROWID"), "\(outboxSQL)")
                #expect(kinds == ["delete 1", "save 1", "save 1"])
                #expect(laptop.engine.state.hasPendingUntrackedChanges, "the engine hears that they wait")
                // Everything is in the default book; nothing is pending on the shared database.
                #expect(try laptop.store.books().map(\.name) == ["Contacts"])
                #expect(try laptop.store.bookCounts() == [Contact.zoneID: 37])
                // Sort keys are those of this version (letters of their own spelled out; migration v5).
                #expect(try laptop.store.summaries().allSatisfy { $0.sortKey == Contact.sortKey($0.name) })
                #expect(!laptop.sharedEngine.state.hasPendingUntrackedChanges)
                // Every contact has its search text (migration v6), so searches find what they used to.
                let texts = Dictionary(uniqueKeysWithValues: try laptop.store.contacts().map { ($0.id, $0.searchText) })
                #expect(
                    try laptop.store.summaries().allSatisfy { texts[$0.id] == $0.searchText && !$0.searchText.isEmpty })
                #expect(
                    try laptop.store.contacts(matching: #require(ContactSearch("lovelace"))).map(\.name) == [
                        "Ada Lovelace"
                    ])
                #expect(try laptop.contact(named: "Ada Lovelace").notes == "Edited offline before the upgrade")
                #expect(laptop.names.filter { $0 == "Grace Hopper" }.count == 2)
                #expect(!laptop.names.contains("Example Bakery"))
                let before = try laptop.store.contacts()

                try await laptop.sync()
                #expect(try laptop.store.pendingCount() == 0)
                #expect(try laptop.store.contacts() == before, "syncing changed nothing on the laptop")

                let desktop = try openDevice("desktop", directory: directory, server: server)
                try await desktop.account.signIn(
                    username: "ada", password: "fixture-password", passphrase: "fixture passphrase")
                try await desktop.sync()
                #expect(try desktop.store.contacts() == before, "the new device has every contact, edits included")
            } catch {
                try? await server.stop()
                throw error
            }
            try await server.stop()
        }
    }
}
