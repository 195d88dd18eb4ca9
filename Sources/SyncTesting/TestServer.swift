import Foundation
import GRDB
import Hummingbird
import Logging
import PostgresNIO
import ServiceLifecycle
import SyncCore
import SyncServer
import Synchronization

extension SyncServerConfiguration {
    /// Settings for tests: cheap password hashing and rate limits no test reaches by accident (all
    /// clients of a test server come from 127.0.0.1, and many tests sign in or fail to).
    public static var testing: SyncServerConfiguration {
        var configuration = SyncServerConfiguration()
        configuration.bcryptCost = 4
        configuration.userRateLimit = .init(requestsPerSecond: 100_000, burst: 100_000)
        configuration.addressRateLimit = .init(requestsPerSecond: 100_000, burst: 100_000)
        configuration.accountCreationRateLimit = .init(requestsPerSecond: 100_000, burst: 100_000)
        configuration.usernameSignInThrottle.freeFailures = 1_000
        configuration.addressSignInThrottle.freeFailures = 100_000
        configuration.passwordHashing = .init(concurrency: 4, queueLimit: 100_000)
        configuration.http.maximumConnections = 10_000
        configuration.http.maximumConnectionsPerAddress = 10_000
        return configuration
    }
}

/// A real sync server in this process, on a free loopback port or answering through its router
/// without a socket (``Transport``), with a throw-away store: a SQLite file, or a PostgreSQL
/// database of its own when ``backend`` says so.
///
/// ```swift
/// let server = try await TestServer.start()
/// defer { Task { try await server.stop() } }
/// let client = TestClient(baseURL: server.baseURL)
/// ```
public final class TestServer: Sendable {
    /// Where a test server stores.
    public enum Backend: String, Sendable {
        case sqlite
        /// A new database of ``TestPostgres``'s server.
        case postgres
    }

    /// How clients reach a test server.
    public enum Transport: Sendable {
        /// A listener on a loopback port, with the HTTP defences and push sockets: for tests of
        /// those, of the process, and of anything that needs a real connection.
        case loopback
        /// No listener: requests to ``baseURL`` go straight to the server's router in this process
        /// (``RouterTransport``), for tests of what the routes decide (records, zones, shares,
        /// hierarchy, isolation). Push sockets cannot be opened.
        case inProcess
    }

    /// Whether `SYNC_TEST_TRANSPORT=loopback` asks for a listener on every server: the tests that
    /// run in process then run over loopback, to compare the two or to rule the transport out.
    public static var everyServerListens: Bool {
        ProcessInfo.processInfo.environment["SYNC_TEST_TRANSPORT"] == "loopback"
    }

    /// The backend servers started in this task use: SQLite unless a test scope says otherwise.
    @TaskLocal public static var backend: Backend = .sqlite
    /// On PostgreSQL, the names of more clusters the servers started in this task place accounts on
    /// (``ClusteredRecordStore``, with the fewest accounts first), each a database of its own beside the
    /// main one; none by default.
    @TaskLocal public static var clusters: [String] = []
    /// The clusters of PostgreSQL servers whose test gives none: `SYNC_TEST_CLUSTERS=b,c` runs every
    /// PostgreSQL test over clusters (the main database and one per name), to check the routing.
    private static var clustersOfEveryServer: [String] {
        (ProcessInfo.processInfo.environment["SYNC_TEST_CLUSTERS"] ?? "").split(separator: ",").map(String.init)
    }

    /// The port the server listens on; 0 for a server without a listener (``Transport/inProcess``).
    public let port: Int
    /// `http://127.0.0.1:<port>`; for a server without a listener, a loopback address of its own
    /// that nothing listens on, which ``TestClient``, ``Database`` and the engine reach it by.
    public let baseURL: String
    /// How clients reach the server.
    public let transport: Transport
    /// The store behind the server, for tests that look at or change it directly.
    public let store: any RecordStore
    /// Where it stores.
    public let backend: Backend
    /// The SQLite file; on PostgreSQL, the path its database is named after.
    public let storagePath: String
    /// The server's push hub.
    public let pushHub: PushHub
    /// Faults to inject into `/v1/databases` requests; none until a test sets a plan.
    public let faults: FaultInjector

    private let serviceGroup: ServiceGroup
    private let runTask: Task<Void, any Error>
    /// Numbers the in-process servers' addresses.
    private static let inProcessServers = Atomic<Int>(0)
    private let ownsStorage: Bool
    /// The relay that carries push notices to and from other instances (PostgreSQL only).
    public var pushRelay: PostgresPushRelay? { Self.relay(in: pushServices) }

    private static func relay(in services: [any Service]) -> PostgresPushRelay? {
        services.lazy.compactMap { $0 as? PostgresPushRelay }.first
    }
    private let pushServices: [any Service]

    private init(
        port: Int, baseURL: String, transport: Transport, store: any RecordStore, backend: Backend,
        storagePath: String, ownsStorage: Bool, pushHub: PushHub, pushServices: [any Service], faults: FaultInjector,
        serviceGroup: ServiceGroup, runTask: Task<Void, any Error>
    ) {
        self.pushServices = pushServices
        self.port = port
        self.baseURL = baseURL
        self.transport = transport
        self.store = store
        self.backend = backend
        self.storagePath = storagePath
        self.ownsStorage = ownsStorage
        self.pushHub = pushHub
        self.faults = faults
        self.serviceGroup = serviceGroup
        self.runTask = runTask
    }

    /// Runs `body` with a server started for it (as ``start(configuration:storagePath:port:faults:)`` starts
    /// one), and stops the server afterwards, whether `body` returns or throws.
    public static func with<T>(
        configuration: SyncServerConfiguration = .testing, transport: Transport = .loopback,
        _ body: (TestServer) async throws -> T
    ) async throws -> T {
        let server = try await start(configuration: configuration, transport: transport)
        do {
            let result = try await body(server)
            try await server.stop()
            return result
        } catch {
            try? await server.stop()
            throw error
        }
    }

    /// Starts a server.
    /// - Parameters:
    ///   - configuration: limits and rate limits; ``SyncServerConfiguration/testing`` by default.
    ///   - storagePath: a SQLite file to use (and keep); by default a new file that ``stop()`` removes. On
    ///     PostgreSQL, the database named after the path (kept), or a new one that ``stop()`` drops.
    ///   - port: 0 for any free port; pass a former server's port to restart "the same" server.
    ///   - transport: a loopback listener, or none (requests go to the router in this process).
    public static func start(
        configuration: SyncServerConfiguration = .testing, storagePath: String? = nil, port: Int = 0,
        faults: FaultInjector = FaultInjector(), transport: Transport = .loopback
    ) async throws -> TestServer {
        let path =
            storagePath
            ?? TemporaryFiles.path("sync-test", extension: "sqlite")
        var logger = Logger(label: "test-server")
        logger.logLevel =
            ProcessInfo.processInfo.environment["SYNC_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        // Process-wide, as the runner does it: the tests' servers report into one registry.
        ServerMetrics.bootstrap()
        let backend = Self.backend
        let store: any RecordStore
        switch backend {
        case .sqlite:
            guard Self.clusters.isEmpty else {
                throw SyncError(
                    .internalError, "clusters are PostgreSQL's: run the test with TestServer.backend .postgres")
            }
            store = try SQLiteRecordStore(path: path, defaultQuotaBytes: configuration.defaultQuotaBytes)
        case .postgres:
            var stores: [(name: String, store: PostgresRecordStore)] = []
            for cluster in ["main"] + (Self.clusters.isEmpty ? Self.clustersOfEveryServer : Self.clusters) {
                let name = Self.databaseName(for: path, cluster: cluster)
                try await TestPostgres.createMigratedDatabase(name)
                stores.append(
                    (
                        cluster,
                        try await PostgresRecordStore.connect(
                            url: TestPostgres.url(database: name), logger: logger,
                            defaultQuotaBytes: configuration.defaultQuotaBytes,
                            connectionWait: configuration.databaseConnectionWait)
                    ))
            }
            store =
                stores.count == 1
                ? stores[0].store
                : try await ClusteredRecordStore(clusters: stores, placementRule: .fewestAccounts, logger: logger)
        }
        let (pushHub, pushServices) = await SyncServerApplication.push(for: store, logger: logger)
        if transport == .inProcess && !Self.everyServerListens {
            return try await startInProcess(
                store: store, configuration: configuration, backend: backend, storagePath: path,
                ownsStorage: storagePath == nil, pushHub: pushHub, pushServices: pushServices, faults: faults,
                logger: logger)
        }
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = SyncServerApplication.makeApplication(
            store: store, configuration: configuration, host: "127.0.0.1", port: port, pushHub: pushHub,
            middleware: [faults.middleware], services: pushServices, logger: logger,
            onServerRunning: { port in
                portContinuation.yield(port)
                portContinuation.finish()
            })
        let group = ServiceGroup(
            configuration: .init(services: [app, SyncServerApplication.pushShutdown(pushHub)], logger: logger))
        let task = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        var iterator = portStream.makeAsyncIterator()
        guard let boundPort = await iterator.next() else {
            // The server stopped before listening: report why.
            try await task.value
            throw SyncError(.internalError, "the test server stopped before it listened on a port")
        }
        try await waitForRelay(in: pushServices)
        return TestServer(
            port: boundPort, baseURL: "http://127.0.0.1:\(boundPort)", transport: .loopback, store: store,
            backend: backend, storagePath: path, ownsStorage: storagePath == nil, pushHub: pushHub,
            pushServices: pushServices, faults: faults, serviceGroup: group, runTask: task)
    }

    /// A server without a listener: its router answers requests to an address of its own, and its
    /// background work (history compaction, the push relay) runs as it would behind a listener.
    private static func startInProcess(
        store: any RecordStore, configuration: SyncServerConfiguration, backend: Backend, storagePath: String,
        ownsStorage: Bool, pushHub: PushHub, pushServices: [any Service], faults: FaultInjector, logger: Logger
    ) async throws -> TestServer {
        let router = SyncServerApplication.makeRouter(
            store: store, pushHub: pushHub, configuration: configuration, middleware: [faults.middleware])
        let services =
            SyncServerApplication.backgroundServices(
                store: store, pushHub: pushHub, configuration: configuration, logger: logger) + pushServices
            + [SyncServerApplication.pushShutdown(pushHub)]
        let group = ServiceGroup(configuration: .init(services: services, logger: logger))
        let task = Task { try await group.run() }
        // A loopback address nothing listens on (the servers with a listener take 127.0.0.1), on
        // the discard port: a request that finds no transport registered fails as if nobody answered.
        let number = inProcessServers.add(1, ordering: .relaxed).newValue
        let baseURL = "http://127.88.\(number / 250 % 250 + 1).\(number % 250 + 1):9"
        InProcessTransports.register(RouterTransport(responder: router.buildResponder(), logger: logger), for: baseURL)
        try await waitForRelay(in: pushServices)
        return TestServer(
            port: 0, baseURL: baseURL, transport: .inProcess, store: store, backend: backend, storagePath: storagePath,
            ownsStorage: ownsStorage, pushHub: pushHub, pushServices: pushServices, faults: faults,
            serviceGroup: group, runTask: task)
    }

    /// On PostgreSQL, a server hears other instances' notices once its relay listens: waits for that.
    private static func waitForRelay(in pushServices: [any Service]) async throws {
        guard let relay = relay(in: pushServices) else { return }
        try await waitUntil("the push relay listens on PostgreSQL") { relay.isListening }
    }

    /// Stops the server gracefully and, if it made its own store, removes its files (the assets' directory too).
    /// - Parameter openingGates: whether requests held at a gate go on first (a graceful shutdown
    ///   waits for every request). A test of the shutdown itself passes false and opens them later.
    public func stop(openingGates: Bool = true) async throws {
        if openingGates { faults.openAllGates() }
        if transport == .inProcess { InProcessTransports.remove(baseURL) }
        await serviceGroup.triggerGracefulShutdown()
        try await runTask.value
        switch backend {
        case .sqlite where ownsStorage:
            TemporaryFiles.removeSQLite(storagePath)
        case .sqlite:
            break
        case .postgres:
            (store as? PostgresRecordStore)?.close()
            (store as? ClusteredRecordStore)?.close()
            guard ownsStorage else { return }
            for cluster in (store as? ClusteredRecordStore)?.clusterNames ?? ["main"] {
                try await TestPostgres.dropDatabase(Self.databaseName(for: storagePath, cluster: cluster))
            }
        }
    }

    /// Where `sync-server` and its admin commands find this server's storage, as options: `--storage`
    /// with its file, or `--database` with its database and `--cluster NAME=URL` for each other cluster.
    public func storageArguments() throws -> [String] {
        guard backend == .postgres else { return ["--storage", storagePath] }
        var arguments = ["--database", try databaseURL()]
        for cluster in (store as? ClusteredRecordStore)?.clusterNames.dropFirst() ?? [] {
            arguments += ["--cluster", "\(cluster)=\(try databaseURL(cluster: cluster))"]
        }
        return arguments
    }

    /// On PostgreSQL, the store of each database the server stores in: its own, or each cluster's (the
    /// main one first).
    public var postgresStores: [PostgresRecordStore] {
        (store as? ClusteredRecordStore)?.clusterStores ?? [store as? PostgresRecordStore].compactMap { $0 }
    }

    /// On PostgreSQL, the address of the database of cluster `cluster` (`main`: the server's own), as
    /// `sync-server --database` and `--cluster` take it.
    public func databaseURL(cluster: String = "main") throws -> String {
        try TestPostgres.url(database: Self.databaseName(for: storagePath, cluster: cluster))
    }

    /// The database of cluster `cluster` of a server whose storage is named by `path`: the main one is
    /// the database named after the path.
    private static func databaseName(for path: String, cluster: String) -> String {
        let main = TestPostgres.databaseName(for: path)
        return cluster == "main" ? main : main + "_" + cluster
    }
}

extension TestServer {
    /// Every byte the server stores: the SQLite files (the database and its write-ahead log), or every
    /// value of every table of its PostgreSQL database, as stored (text as UTF-8, bytea as it is), for
    /// tests that check what the server keeps.
    public func storedBytes() async throws -> Data {
        switch backend {
        case .sqlite:
            var bytes = Data()
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: storagePath + suffix) {
                bytes += try Data(contentsOf: URL(fileURLWithPath: storagePath + suffix))
            }
            return bytes
        case .postgres:
            let columns = try await postgres { connection, logger in
                var columns: [(table: String, column: String, type: String)] = []
                for try await column in try await connection.query(
                    """
                    SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns
                    WHERE table_schema = 'public'
                    """, logger: logger
                ).decode((String, String, String).self) {
                    columns.append(column)
                }
                return columns
            }
            var bytes = Data()
            for (table, column, type) in columns {
                let value = type == "bytea" ? "\"\(column)\"" : "convert_to(\"\(column)\"::text, 'UTF8')"
                bytes += try await postgres { connection, logger in
                    var bytes = Data()
                    for try await cell in try await connection.query(
                        PostgresQuery(unsafeSQL: "SELECT \(value) FROM \"\(table)\""), logger: logger
                    ).decode(Data?.self) {
                        bytes += cell ?? Data()
                    }
                    return bytes
                }
            }
            return bytes
        }
    }

    /// Every value of a text column of the server's store (`SELECT column FROM table`).
    public func storedStrings(_ column: String, in table: String) async throws -> [String] {
        let sql = "SELECT \(column) FROM \(table)"
        switch backend {
        case .sqlite:
            return try await DatabaseQueue(path: storagePath).read { db in try String.fetchAll(db, sql: sql) }
        case .postgres:
            return try await postgres { connection, logger in
                var values: [String] = []
                for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                    .decode(String.self)
                {
                    values.append(value)
                }
                return values
            }
        }
    }

    private func postgres<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> Result
    ) async throws -> Result {
        guard let store = (store as? ClusteredRecordStore)?.main ?? store as? PostgresRecordStore else {
            throw SyncError(.internalError, "this test server does not store in PostgreSQL")
        }
        return try await store.withConnection { try await body($0, store.logger) }
    }
}
