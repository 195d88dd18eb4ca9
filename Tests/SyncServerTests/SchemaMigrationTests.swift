import Foundation
import GRDB
import Logging
import PostgresNIO
import SyncTesting
import Testing

@testable import SyncServer

/// The PostgreSQL schema's versions. Enabled only with a PostgreSQL (`SYNC_TEST_POSTGRES_URL`); without
/// one these tests are reported as skipped, with the reason, and the server suites ran on SQLite only.
@Suite("PostgreSQL schema migrations", .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
struct PostgresSchemaTests {
    let logger = Logger(label: "schema-test")

    /// Runs `body` with the address of a new, empty database, dropped afterwards.
    func withEmptyDatabase(_ body: (String) async throws -> Void) async throws {
        let name = TestPostgres.databaseName(for: "schema-\(UUID())")
        try await TestPostgres.createDatabase(name)
        do {
            try await body(try TestPostgres.url(database: name))
            try await TestPostgres.dropDatabase(name)
        } catch {
            try? await TestPostgres.dropDatabase(name)
            throw error
        }
    }

    /// The versions recorded in the database, in order.
    func versions(_ store: PostgresRecordStore) async throws -> [Int] {
        try await store.withConnection { connection in
            var versions: [Int] = []
            for try await version in try await connection.query(
                "SELECT version FROM schema_migration ORDER BY version", logger: logger
            ).decode(Int.self) {
                versions.append(version)
            }
            return versions
        }
    }

    @Test("four instances starting at once on an empty database migrate it once, and all serve")
    func concurrentStartsMigrateOnce() async throws {
        try await withEmptyDatabase { url in
            let stores = try await withThrowingTaskGroup(of: PostgresRecordStore.self) { group in
                for _ in 0..<4 { group.addTask { try await PostgresRecordStore.connect(url: url, logger: logger) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            defer { for store in stores { store.close() } }
            #expect(try await versions(stores[0]) == PostgresRecordStore.schemaVersions)
            for (index, store) in stores.enumerated() {
                try await store.createAccount(
                    StoredAccount(
                        userRecordName: "_u\(index)", username: "user\(index)", passwordHash: "x", createdAt: Date()))
            }
            for (index, store) in stores.enumerated() {
                #expect(
                    try await store.account(username: "USER\((index + 1) % 4)")?.userRecordName
                        == "_u\((index + 1) % 4)")
            }
        }
    }

    @Test("a database at a newer schema than this server knows is refused with what to do, and left alone")
    func newerSchemaIsRefused() async throws {
        try await withEmptyDatabase { url in
            let store = try await PostgresRecordStore.connect(url: url, logger: logger)
            let newer = PostgresRecordStore.schemaVersion + 1
            try await store.withConnection { connection in
                try await connection.query(
                    "INSERT INTO schema_migration (version, name) VALUES (\(newer), 'from a newer server')",
                    logger: logger)
            }
            let refusal = await #expect(throws: SchemaError.self) {
                try await PostgresRecordStore.connect(url: url, logger: logger)
            }
            #expect(
                refusal?.description.contains("newer than this sync-server knows") == true,
                "\(String(describing: refusal))")
            #expect(refusal?.description.contains("run the newer sync-server") == true)
            #expect(try await versions(store) == PostgresRecordStore.schemaVersions + [newer], "nothing was changed")
            store.close()
        }
    }
}

/// Addresses of PostgreSQL databases, read before any connection is tried.
@Suite("PostgreSQL addresses")
struct PostgresAddressTests {
    let logger = Logger(label: "address-test")

    @Test("a database address that cannot work is refused naming what is wrong, without its password")
    func badAddresses() async throws {
        for (url, expected) in [
            ("mysql://u@h/db", "must start with postgres://"),
            ("postgres://h/db", "names no user"),
            ("postgres://u:secret@h:5432", "names no database"),
            ("postgres://u:secret@h/db?sslmode=maybe", "sslmode 'maybe'"),
            ("postgres://u@h/db?timeout=3", "'timeout' is not a setting"),
            ("postgres://u:secret@h1:5432,h2:99999/db", "'99999' is not a port"),
            ("postgres://u:secret@h1,/db", "names no host"),
            ("postgres://u:secret@[::1:5432/db", "does not close it"),
            ("postgres://u:secret@h1,h2/db?target_session_attrs=standby", "target_session_attrs 'standby'"),
            ("postgres://u:secret@h1,h2/db?host=/run/postgresql", "goes with one node"),
        ] {
            let error = await #expect(throws: SchemaError.self) {
                try await PostgresRecordStore.connect(url: url, logger: logger)
            }
            #expect(error?.description.contains(expected) == true, "\(url): \(String(describing: error))")
            #expect(error?.description.contains("secret") == false, "\(url): the password was shown")
        }
    }
}

extension PostgresAddressTests {
    @Test("several nodes of one cluster are read as libpq writes them (what pg_autoctl show uri prints)")
    func severalNodes() throws {
        let address = try PostgresURL.address(
            "postgresql://ada:p%40ss@10.0.0.1:5433,[fd00::2],db-3.example:6000/sync%20db?target_session_attrs=read-write&sslmode=require"
        )
        #expect(address.endpoints.map(\.description) == ["10.0.0.1:5433", "[fd00::2]:5432", "db-3.example:6000"])
        #expect(address.username == "ada" && address.password == "p@ss" && address.database == "sync db")
        #expect(address.tls == .require && address.sessionAttributes == .readWrite && address.followsPrimary)
        let one = try PostgresURL.address("postgres://ada@localhost/sync?host=/run/postgresql")
        #expect(one.endpoints.map(\.description) == ["/run/postgresql/.s.PGSQL.5432"] && !one.followsPrimary)
        #expect(
            try PostgresURL.replacingDatabase(
                in: "postgres://ada:pw@h1:1,h2:2/postgres?target_session_attrs=read-write", with: "sync_test_1")
                == "postgres://ada:pw@h1:1,h2:2/sync_test_1?target_session_attrs=read-write")
        #expect(
            PostgresURL.redacted("postgres://ada:secret@h1:1,h2:2/db?sslmode=disable")
                == "postgres://ada:REDACTED@h1:1,h2:2/db?sslmode=disable")
    }

    @Test("a server whose database cannot be reached does not start, and says where it tried, without the password")
    func unreachableDatabase() async throws {
        var runner = SyncServerRunner(storagePath: "/nonexistent/never-used.sqlite")
        // Port 1 on loopback: nothing listens, every connection is refused.
        runner.databaseURL = "postgres://ada:secret@127.0.0.1:1/sync?sslmode=disable"
        runner.logLevel = .critical
        let error = await #expect(throws: StartupError.self) { try await runner.run() }
        let message = error?.description ?? ""
        #expect(
            message.contains("cannot connect to the database at postgres://ada:REDACTED@127.0.0.1:1/sync"), "\(message)"
        )
        #expect(message.contains("check that PostgreSQL runs"))
        #expect(!message.contains("secret"))
    }
}

/// The SQLite file's schema versions (GRDB's migrations).
@Suite("SQLite schema migrations")
struct SQLiteSchemaTests {
    /// The file opened as a person inspecting it would, waiting while the store just dropped closes its
    /// connections: the last to close copies the log into the file and holds it meanwhile, and an open
    /// that does not wait fails with "database is locked" on a busy machine.
    private static func opened(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(60)
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    @Test("a storage file at a newer schema than this server knows is refused with what to do, and left alone")
    func newerSchemaIsRefused() async throws {
        let path = TemporaryFiles.path("schema", extension: "sqlite")
        defer { TemporaryFiles.removeSQLite(path) }
        _ = try SQLiteRecordStore(path: path)
        let known = try await Self.opened(path).read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
        }
        try await Self.opened(path).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from a newer server')")
        }
        let refusal = #expect(throws: SchemaError.self) { try SQLiteRecordStore(path: path) }
        #expect(
            refusal?.description.contains("newer than this sync-server knows") == true, "\(String(describing: refusal))"
        )
        #expect(refusal?.description.contains("v99: from a newer server") == true)
        let identifiers = try await Self.opened(path).read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
        }
        #expect(identifiers.sorted() == (known + ["v99: from a newer server"]).sorted(), "nothing else was touched")
    }
}
