import Foundation
import Hummingbird
import Logging
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

/// A real sync server in this process, on a free loopback port, with a throw-away SQLite store.
///
/// ```swift
/// let server = try await TestServer.start()
/// defer { Task { try await server.stop() } }
/// let client = TestClient(baseURL: server.baseURL)
/// ```
public final class TestServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }
    /// The store behind the server, for tests that look at or change it directly.
    public let store: SQLiteRecordStore
    /// The SQLite file.
    public let storagePath: String
    /// The server's push hub.
    public let pushHub: PushHub
    /// Faults to inject into `/v1/databases` requests; none until a test sets a plan.
    public let faults: FaultInjector

    private let serviceGroup: ServiceGroup
    private let runTask: Task<Void, any Error>
    private let ownsStorage: Bool

    private init(
        port: Int, store: SQLiteRecordStore, storagePath: String, ownsStorage: Bool, pushHub: PushHub,
        faults: FaultInjector, serviceGroup: ServiceGroup, runTask: Task<Void, any Error>
    ) {
        self.port = port
        self.store = store
        self.storagePath = storagePath
        self.ownsStorage = ownsStorage
        self.pushHub = pushHub
        self.faults = faults
        self.serviceGroup = serviceGroup
        self.runTask = runTask
    }

    /// Starts a server.
    /// - Parameters:
    ///   - configuration: limits and rate limits; ``SyncServerConfiguration/testing`` by default.
    ///   - storagePath: a SQLite file to use (and keep); by default a new file that ``stop()`` removes.
    ///   - port: 0 for any free port; pass a former server's port to restart "the same" server.
    public static func start(
        configuration: SyncServerConfiguration = .testing, storagePath: String? = nil, port: Int = 0,
        faults: FaultInjector = FaultInjector()
    ) async throws -> TestServer {
        let path =
            storagePath
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("sync-test-\(UUID().uuidString).sqlite")
            .path
        let store = try SQLiteRecordStore(path: path)
        var logger = Logger(label: "test-server")
        logger.logLevel =
            ProcessInfo.processInfo.environment["SYNC_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        let pushHub = PushHub()
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = SyncServerApplication.makeApplication(
            store: store, configuration: configuration, host: "127.0.0.1", port: port, pushHub: pushHub,
            middleware: [faults.middleware], logger: logger,
            onServerRunning: { port in
                portContinuation.yield(port)
                portContinuation.finish()
            })
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
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
        return TestServer(
            port: boundPort, store: store, storagePath: path, ownsStorage: storagePath == nil, pushHub: pushHub,
            faults: faults, serviceGroup: group, runTask: task)
    }

    /// Stops the server gracefully and, if it made its own store, removes the file.
    public func stop() async throws {
        // A graceful shutdown waits for every request: let those held at a gate go on.
        faults.openAllGates()
        await serviceGroup.triggerGracefulShutdown()
        try await runTask.value
        if ownsStorage {
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: storagePath + suffix)
            }
        }
    }
}

extension TestServer {
    /// Every byte of the server's SQLite files (the database and its write-ahead log), for tests
    /// that check what the server stores.
    public func storedBytes() throws -> Data {
        var bytes = Data()
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: storagePath + suffix) {
            bytes += try Data(contentsOf: URL(fileURLWithPath: storagePath + suffix))
        }
        return bytes
    }
}
