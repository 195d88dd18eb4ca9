import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import SyncCore
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a server on a storage file, or on a PostgreSQL database, until SIGTERM or SIGINT: what
/// `sync-server` does, and what `contacts server` does for the app's zero-setup local server.
public struct SyncServerRunner: Sendable {
    public var storagePath: String
    /// A PostgreSQL database's address (`postgres://user@host:port/database`); when set, the server
    /// stores there, and several instances may serve the same database.
    public var databaseURL: String?
    public var host = "127.0.0.1"
    public var port = 8080
    /// A Unix domain socket to listen on instead of TCP, created private to the user.
    public var unixSocketPath: String?
    /// Whether to listen on TCP (`host`, `port`); false with ``unixSocketPath`` listens on the socket only.
    public var listensOnTCP = true
    public var configuration = SyncServerConfiguration()
    public var logLevel: Logger.Level = .info
    /// Called with the port once the server listens (the one the kernel chose, for port 0).
    public var onListening: (@Sendable (Int) -> Void)?

    public init(storagePath: String) {
        self.storagePath = storagePath
    }

    /// Opens the storage and serves.
    public func run() async throws {
        var logger = Logger(label: "sync-server")
        logger.logLevel = logLevel
        if let databaseURL {
            let store: PostgresRecordStore
            do {
                store = try await PostgresRecordStore.connect(
                    url: databaseURL, logger: logger, defaultQuotaBytes: configuration.defaultQuotaBytes)
            } catch let error as SchemaError {
                throw StartupError(error.description)
            } catch let error as SyncError where error.code == .serviceUnavailable {
                throw StartupError(
                    "cannot connect to the database at \(PostgresURL.redacted(databaseURL)) within \(PostgresSchema.connectTimeout.components.seconds) s; check that PostgreSQL runs there and takes this user, password and database"
                )
            } catch {
                throw StartupError(
                    "cannot use the database: \(String(reflecting: error)); check that PostgreSQL runs and the address is right"
                )
            }
            defer { store.close() }
            try await serve(store: store, storageDescription: "PostgreSQL", logger: logger)
        } else {
            try await serveSQLite(logger: logger)
        }
    }

    /// Opens the storage file (creating its directory, private to the user), takes its lock, and serves.
    private func serveSQLite(logger: Logger) async throws {
        let path = storagePath
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: directory.isEmpty ? "." : directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw StartupError("cannot create the storage directory \(directory): \(error.localizedDescription)")
        }
        let lock = try StorageLock(path: path + ".lock")
        defer { withExtendedLifetime(lock) {} }

        // Created private before SQLite opens it: SQLite gives its -wal and -shm files the same mode.
        let created = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        if created >= 0 { close(created) }
        let store: SQLiteRecordStore
        do {
            store = try SQLiteRecordStore(path: path, defaultQuotaBytes: configuration.defaultQuotaBytes)
        } catch {
            throw StartupError("cannot open the storage file \(path): \(error)")
        }
        try await serve(store: store, storageDescription: path, logger: logger)
    }

    private func serve(store: any RecordStore, storageDescription: String, logger: Logger) async throws {
        let (host, port, onListening) = (self.host, self.port, self.onListening)
        let socket = listensOnTCP ? nil : unixSocketPath
        if let socket { try Self.removeStaleSocket(at: socket) }
        let push = await SyncServerApplication.push(for: store, logger: logger)
        let app = SyncServerApplication.makeApplication(
            store: store, configuration: configuration, host: host, port: port, pushHub: push.hub,
            services: push.services, logger: logger, unixSocketPath: socket,
            onServerRunning: { [logger] port in
                if let socket { chmod(socket, 0o600) }
                let address = socket.map { "unix socket \($0)" } ?? "http://\(host):\(port)"
                logger.notice("sync-server listening on \(address) (storage: \(storageDescription))")
                onListening?(port)
            })
        let group = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw StartupError("\(host):\(port) is already in use; stop what listens there or pass another --port")
        } catch let error as IOError where error.errnoCode == EACCES {
            throw StartupError("not allowed to listen on \(host):\(port); use a port above 1023")
        }
    }
}

extension SyncServerRunner {
    /// Removes a socket file a server that ended without a word left behind. Called only while this
    /// server holds its storage's lock, so no other server of this storage listens there; anything
    /// but a socket at the path is left alone, and refused.
    static func removeStaleSocket(at path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw StartupError("\(path) exists and is not a socket; move it away, or choose another socket path")
        }
        unlink(path)
    }
}

/// A reason the server cannot start; printed as it is, without the usage text.
public struct StartupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Keeps a second server from serving the same storage file (its pushes would go unheard).
final class StorageLock {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_CREAT | O_RDWR, 0o600)
        guard descriptor >= 0 else {
            throw StartupError("cannot create the lock file \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw StartupError(
                "another sync-server is already using this storage (\(path) is locked); stop it or pass another --storage"
            )
        }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
