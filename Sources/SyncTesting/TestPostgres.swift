import Crypto
import Foundation
import Logging
import PostgresNIO
import SyncCore
import SyncServer
import Synchronization

/// The PostgreSQL that tests run the server on, when there is one: `SYNC_TEST_POSTGRES_URL` names a
/// database of it that the tests may connect to in order to create and drop their own databases
/// (`Scripts/with-postgres` starts a throw-away PostgreSQL and sets it, in CI and on a developer's
/// machine).
public enum TestPostgres {
    /// The address of the maintenance database, or nil when the tests have no PostgreSQL.
    public static var url: String? {
        override ?? ProcessInfo.processInfo.environment["SYNC_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Another PostgreSQL (a test's own ``PostgresCluster``) for what this task does: the servers it
    /// starts and the databases it creates and drops.
    @TaskLocal public static var override: String?

    /// What to say where PostgreSQL tests did not run.
    public static let notConfigured =
        "PostgreSQL tests did NOT run: SYNC_TEST_POSTGRES_URL is not set (run the tests as `Scripts/with-postgres swift test`)"

    /// The address of database `name` on the same server.
    public static func url(database name: String) throws -> String {
        guard let url else { throw TestPostgresError.notConfigured }
        return try PostgresRecordStore.url(url, database: name)
    }

    /// A database name for a storage path, the same for the same path (a test that restarts a server
    /// on "the same storage" gets the same database).
    public static func databaseName(for path: String) -> String {
        "sync_test_" + Hexadecimal.lowercase(SHA256.hash(data: Data(path.utf8)).prefix(12))
    }

    /// Creates database `name` unless it exists.
    public static func createDatabase(_ name: String) async throws {
        try await createDatabase(name, copying: nil)
    }

    /// Creates database `name` unless it exists: empty, or a copy of database `template`.
    private static func createDatabase(_ name: String, copying template: String?) async throws {
        try await withMaintenanceConnection { connection, logger in
            guard try await !exists(name, connection, logger: logger) else { return }
            let copy = template.map { " TEMPLATE \"\($0)\"" } ?? ""
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\"\(copy)"), logger: logger)
        }
    }

    /// Whether the server has a database named `name`.
    private static func exists(_ name: String, _ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await !connection.query("SELECT 1 FROM pg_database WHERE datname = \(name)", logger: logger).collect()
            .isEmpty
    }

    /// Creates database `name` unless it exists, already at the current schema: a copy of a template
    /// database migrated once per PostgreSQL server and schema version, which costs the server a
    /// fraction of migrating each test's database (the tests create hundreds). Falls back to an empty
    /// database, which the store then migrates, when the template cannot be made or copied.
    public static func createMigratedDatabase(_ name: String) async throws {
        guard let url else { throw TestPostgresError.notConfigured }
        let making: Task<String, any Error> = templates.withLock { templates in
            if let made = templates[url] { return made }
            let making = Task { try await makeTemplate() }
            templates[url] = making
            return making
        }
        guard let template = try? await making.value else { return try await createDatabase(name) }
        do {
            try await createDatabase(name, copying: template)
        } catch {
            try await createDatabase(name)
        }
    }

    /// The template of each PostgreSQL server (by maintenance URL), once made.
    private static let templates = Mutex<[String: Task<String, any Error>]>([:])

    /// Makes (or finds) the migrated template of this PostgreSQL server: migrated under a name of
    /// its own, then renamed, so that a test run that finds the template finds it whole.
    private static func makeTemplate() async throws -> String {
        let name = "sync_test_template_v\(PostgresRecordStore.schemaVersion)"
        var found = false
        try await withMaintenanceConnection { connection, logger in
            found = try await exists(name, connection, logger: logger)
        }
        if found { return name }
        let building = "sync_test_template_building_\(UUID().uuidString.prefix(8).lowercased())"
        try await createDatabase(building)
        var logger = Logger(label: "test-postgres")
        logger.logLevel = .error
        let store = try await PostgresRecordStore.connect(url: url(database: building), logger: logger)
        store.close()
        try await withMaintenanceConnection { connection, logger in
            // A database is copied or renamed only when nobody is connected to it.
            try await connection.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(building)", logger: logger)
            do {
                try await connection.query(
                    PostgresQuery(unsafeSQL: "ALTER DATABASE \"\(building)\" RENAME TO \"\(name)\""), logger: logger)
            } catch {
                // Another test run made it meanwhile.
                try await connection.query(
                    PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \"\(building)\" WITH (FORCE)"), logger: logger)
            }
        }
        return name
    }

    /// Runs `body` with the address of database `name`, created for it and dropped after it, whether it
    /// returns or throws.
    public static func withDatabase<Result>(_ name: String, _ body: (String) async throws -> Result) async throws
        -> Result
    {
        try await createDatabase(name)
        do {
            let result = try await body(try url(database: name))
            try await dropDatabase(name)
            return result
        } catch {
            try? await dropDatabase(name)
            throw error
        }
    }

    /// Drops database `name`, closing whatever is still connected to it.
    public static func dropDatabase(_ name: String) async throws {
        try await withMaintenanceConnection { connection, logger in
            try await connection.query(
                PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)"), logger: logger)
        }
    }

    /// The names of the databases on the server, the maintenance database's among them.
    public static func databases() async throws -> [String] {
        let names = Mutex<[String]>([])
        try await withMaintenanceConnection { connection, logger in
            for try await name in try await connection.query("SELECT datname FROM pg_database", logger: logger)
                .decode(String.self)
            {
                names.withLock { $0.append(name) }
            }
        }
        return names.withLock { $0 }
    }

    /// Runs one statement on the maintenance database, as PostgreSQL's administrator would.
    public static func execute(_ sql: String) async throws {
        try await withMaintenanceConnection { connection, logger in
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        }
    }

    private static func withMaintenanceConnection(
        _ body: (PostgresConnection, Logger) async throws -> Void
    ) async throws {
        guard let url else { throw TestPostgresError.notConfigured }
        var logger = Logger(label: "test-postgres")
        // postgres-nio warns when a lease comes before `run()` has begun, which is harmless here.
        logger.logLevel = .error
        let client = PostgresClient(
            configuration: try await PostgresRecordStore.configuration(url: url, logger: logger),
            backgroundLogger: logger)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await client.run() }
            try await client.withConnection { connection in try await body(connection, logger) }
            group.cancelAll()
        }
    }
}

/// Why a test could not use PostgreSQL.
public enum TestPostgresError: Error, CustomStringConvertible {
    case notConfigured

    public var description: String { TestPostgres.notConfigured }
}
