import Foundation
import Hummingbird
import Listeners
import LocalSystem
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import SyncCore
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a server on a storage file, or on a PostgreSQL database, until SIGTERM or SIGINT: what
/// `sync-server` does, and what `contacts server` does for the app's zero-setup local server.
///
/// It listens on TCP (``host``, ``port``, with TLS when ``tls`` is set), on a Unix domain socket
/// (``unixSocketPath``), or both: one router, one push hub and one store behind every listener.
/// `GET /metrics` is served only on a listener of its own (``metricsAddress``).
public struct SyncServerRunner: Sendable {
    public var storagePath: String
    /// A PostgreSQL database's address (`postgres://user@host:port/database`); when set, the server
    /// stores there, and several instances may serve the same database.
    public var databaseURL: String?
    /// More PostgreSQL clusters to place accounts on, beside ``databaseURL`` (the cluster named `main`,
    /// which holds the directory of which account lives where); none for one database.
    public var clusters: [(name: String, url: String)] = []
    /// Where new accounts go when there are ``clusters``.
    public var placementRule: PlacementRule = .fewestAccounts
    public var host = "127.0.0.1"
    public var port = 8080
    /// Whether the server listens on TCP at ``host``:``port``. False serves ``unixSocketPath`` alone.
    public var listensOnTCP = true
    /// A Unix domain socket to listen on, made mode 0600 (only this user may connect) and removed
    /// when the server stops gracefully. A socket left at the path by a server that is gone is
    /// replaced; a server answering there, or a file that is not a socket, stops the start.
    public var unixSocketPath: String?
    /// A certificate and key to serve TLS with on the TCP listener (never on the Unix socket,
    /// whose directory's mode is what keeps others out).
    public var tls: TLSFiles?
    /// Where `GET /metrics` is served; nowhere when nil. Never on the public listeners.
    public var metricsAddress: ListenAddress?
    public var configuration = SyncServerConfiguration()
    public var logLevel: Logger.Level = .info
    /// Called with the port once the server listens on TCP (the one the kernel chose, for port 0).
    public var onListening: (@Sendable (Int) -> Void)?
    /// Called with the path once the server listens on the Unix socket, and the socket is private.
    public var onSocketListening: (@Sendable (String) -> Void)?
    /// Called with the port once the metrics listener listens.
    public var onMetricsListening: (@Sendable (Int) -> Void)?

    public init(storagePath: String) {
        self.storagePath = storagePath
    }

    /// Opens the storage and serves.
    public func run() async throws {
        guard listensOnTCP || unixSocketPath != nil else {
            throw StartupError("the server has nothing to listen on: give it a TCP port or a Unix socket")
        }
        // Read before the storage is opened: a typo in a file name costs nothing.
        let tlsConfiguration: TLSConfiguration?
        do {
            tlsConfiguration = try tls?.serverConfiguration()
        } catch let error as TLSFilesError {
            throw StartupError(error.description)
        }
        var logger = Logger(label: "sync-server")
        logger.logLevel = logLevel
        if let databaseURL, !clusters.isEmpty {
            let store = try await ClusteredRecordStore.connect(
                clusters: [("main", databaseURL)] + clusters, placementRule: placementRule, logger: logger,
                defaultQuotaBytes: configuration.defaultQuotaBytes, connectionWait: configuration.databaseConnectionWait
            )
            defer { store.close() }
            try await serve(
                store: store, storageDescription: "PostgreSQL, clusters \(store.clusterNames.joined(separator: ", "))",
                tls: tlsConfiguration, logger: logger)
        } else if let databaseURL {
            let store = try await PostgresRecordStore.connectToServe(
                url: databaseURL, logger: logger, defaultQuotaBytes: configuration.defaultQuotaBytes,
                connectionWait: configuration.databaseConnectionWait)
            defer { store.close() }
            try await serve(
                store: store, storageDescription: "PostgreSQL", tls: tlsConfiguration, logger: logger)
        } else {
            try await serveSQLite(tls: tlsConfiguration, logger: logger)
        }
    }

    /// Opens the storage file (creating its directory, private to the user), takes its lock, and serves.
    private func serveSQLite(tls: TLSConfiguration?, logger: Logger) async throws {
        let path = storagePath
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: directory.isEmpty ? "." : directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw StartupError("cannot create the storage directory \(directory): \(error.localizedDescription)")
        }
        try StorageDirectory.check(directory.isEmpty ? "." : directory)
        let lock: FileLock
        do {
            lock = try FileLock.acquire(path + ".lock")
        } catch .held, .timedOut {
            throw StartupError(.storageInUse(lockPath: path + ".lock"))
        } catch {
            throw StartupError(error.description)
        }
        defer { lock.release() }

        // Created private before SQLite opens it: SQLite gives its -wal and -shm files the same mode.
        let created = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        if created >= 0 { close(created) }
        let store: SQLiteRecordStore
        do {
            store = try SQLiteRecordStore(path: path, defaultQuotaBytes: configuration.defaultQuotaBytes)
        } catch {
            throw StartupError("cannot open the storage file \(path): \(error)")
        }
        try await serve(store: store, storageDescription: path, tls: tls, logger: logger)
    }

    private func serve(
        store: any RecordStore, storageDescription: String, tls: TLSConfiguration?, logger: Logger
    ) async throws {
        let (host, port) = (self.host, self.port)
        let (onListening, onSocketListening, onMetricsListening) = (
            self.onListening, self.onSocketListening, self.onMetricsListening
        )
        // After the storage's lock: a second server of the same storage is told about the storage.
        if let unixSocketPath { try UnixSocketFile.prepare(unixSocketPath) }
        let push = await SyncServerApplication.push(for: store, logger: logger)
        let router = SyncServerApplication.makeRouter(store: store, pushHub: push.hub, configuration: configuration)
        // The server's background work runs with the first listener.
        var background =
            SyncServerApplication.backgroundServices(
                store: store, pushHub: push.hub, configuration: configuration, logger: logger)
            + push.services
        var services: [any Service] = []
        if listensOnTCP {
            let scheme = tls == nil ? "http" : "https"
            services.append(
                try SyncServerApplication.makeListener(
                    router: router, address: .hostname(host, port: port), tls: tls, configuration: configuration,
                    services: background, logger: logger,
                    onServerRunning: { [logger] port in
                        logger.notice(
                            "sync-server listening on \(scheme)://\(host):\(port) (storage: \(storageDescription))")
                        onListening?(port)
                    }))
            background = []
        }
        if let path = unixSocketPath {
            services.append(
                try SyncServerApplication.makeListener(
                    router: router, address: .unixDomainSocket(path: path), tls: nil, configuration: configuration,
                    services: background, logger: logger,
                    onServerRunning: { [logger] _ in
                        do {
                            try UnixSocketFile.makePrivate(path)
                        } catch {
                            // Not announced: whoever waits for the socket keeps waiting, and the log says why.
                            logger.critical("\(error)")
                            return
                        }
                        logger.notice("sync-server listening on unix socket \(path) (storage: \(storageDescription))")
                        onSocketListening?(path)
                    }))
        }
        if let metrics = metricsAddress {
            services.append(
                MetricsListener.makeApplication(
                    host: metrics.host, port: metrics.port, logger: logger,
                    onServerRunning: { [logger] port in
                        logger.notice("sync-server serves metrics at http://\(metrics.host):\(port)/metrics")
                        onMetricsListening?(port)
                    }))
        }
        services.append(SyncServerApplication.pushShutdown(push.hub))
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        defer { if let unixSocketPath { UnixSocketFile.remove(unixSocketPath) } }
        do {
            try await group.run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            let addresses = ["\(host):\(port)"] + (metricsAddress.map { ["\($0)"] } ?? [])
            throw StartupError(.addressInUse(addresses))
        } catch let error as IOError where error.errnoCode == EACCES {
            throw StartupError("not allowed to listen on \(host):\(port); use a port above 1023")
        }
    }
}

/// A reason the server cannot start; printed as it is, without the usage text.
///
/// The cases a program running the server can do something about carry their facts in ``reason``, so that
/// each program words them with its own options; ``description`` says them without naming any.
public struct StartupError: Error, CustomStringConvertible {
    /// What stopped the server, when a program may word it itself.
    public enum Reason: Sendable, Hashable {
        /// Said in ``StartupError/description`` alone.
        case described
        /// Something else listens on one of these addresses (`host:port`).
        case addressInUse([String])
        /// Another server serves this storage file: it holds the lock file at `lockPath`.
        case storageInUse(lockPath: String)
    }

    public let reason: Reason
    public let description: String

    public init(_ description: String) {
        reason = .described
        self.description = description
    }

    public init(_ reason: Reason) {
        self.reason = reason
        switch reason {
        case .described:
            description = "the server could not start"
        case .addressInUse(let addresses):
            description =
                "\(addresses.joined(separator: " or ")) is already in use; stop what listens there, or choose another port"
        case .storageInUse(let lockPath):
            description =
                "another sync-server is already using this storage (\(lockPath) is locked); stop it, or choose another storage file"
        }
    }
}
