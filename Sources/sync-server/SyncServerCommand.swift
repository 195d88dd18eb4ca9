import ArgumentParser
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import SyncServer
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

@main
struct SyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-server",
        abstract: "A CloudKit-style record server: accounts, zones, records, change tokens and push.",
        discussion: """
            Stores everything in one SQLite file and listens on loopback by default. \
            The API is described in openapi.yaml. Stop it with Ctrl-C or SIGTERM; \
            it finishes the requests in flight first.
            """)

    @Option(help: "The SQLite file to store data in. (default: $XDG_DATA_HOME/sync-server/server.sqlite)")
    var storage: String?

    @Option(help: "The address to listen on. Use 0.0.0.0 only behind TLS on a trusted network.")
    var host = "127.0.0.1"

    @Option(help: "The TCP port to listen on (0 picks a free one).")
    var port = 8080

    @Option(help: "bcrypt cost for password hashes (4–31).")
    var bcryptCost: UInt8 = 12

    @Option(help: "Requests per second allowed per user, sustained.")
    var rateLimit: Double = 50

    @Option(help: "Days to keep tombstones; older change tokens get changeTokenExpired.")
    var tombstoneDays: Int = 30

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    func validate() throws {
        guard (4...31).contains(bcryptCost) else { throw ValidationError("--bcrypt-cost must be between 4 and 31") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard rateLimit > 0 else { throw ValidationError("--rate-limit must be above 0") }
        guard tombstoneDays >= 1 else { throw ValidationError("--tombstone-days must be at least 1") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() async throws {
        var logger = Logger(label: "sync-server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let path = storage ?? Self.defaultStoragePath()
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

        let store: SQLiteRecordStore
        do {
            store = try SQLiteRecordStore(path: path)
        } catch {
            throw StartupError("cannot open the storage file \(path): \(error)")
        }
        var configuration = SyncServerConfiguration()
        configuration.bcryptCost = bcryptCost
        configuration.userRateLimit = .init(requestsPerSecond: rateLimit, burst: rateLimit * 4)
        configuration.tombstoneRetention = .seconds(tombstoneDays * 24 * 3600)
        let app = SyncServerApplication.makeApplication(
            store: store, configuration: configuration, host: host, port: port, logger: logger,
            onServerRunning: { [logger, path] port in
                logger.notice("sync-server listening on http://\(host):\(port) (storage: \(path))")
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

    static func defaultStoragePath() -> String {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return base + "/sync-server/server.sqlite"
    }
}

/// A reason the server cannot start; printed as it is, without the usage text.
struct StartupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
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
