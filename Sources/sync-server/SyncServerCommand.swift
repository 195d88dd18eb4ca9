import ArgumentParser
import Foundation
import Logging
import SyncServer

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

    @Option(help: "Days a session lasts after its last request; then the client signs in again.")
    var sessionDays: Int = 90

    @Option(help: "Password hashes (bcrypt) computed at once. (default: half the cores)")
    var passwordHashingConcurrency: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    func validate() throws {
        guard (4...31).contains(bcryptCost) else { throw ValidationError("--bcrypt-cost must be between 4 and 31") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard rateLimit > 0 else { throw ValidationError("--rate-limit must be above 0") }
        guard tombstoneDays >= 1 else { throw ValidationError("--tombstone-days must be at least 1") }
        guard (1...3650).contains(sessionDays) else {
            throw ValidationError("--session-days must be between 1 and 3650")
        }
        if let passwordHashingConcurrency, !(1...1024).contains(passwordHashingConcurrency) {
            throw ValidationError("--password-hashing-concurrency must be between 1 and 1024")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() async throws {
        var runner = SyncServerRunner(storagePath: storage ?? Self.defaultStoragePath())
        runner.host = host
        runner.port = port
        runner.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        runner.configuration.bcryptCost = bcryptCost
        runner.configuration.userRateLimit = .init(requestsPerSecond: rateLimit, burst: rateLimit * 4)
        runner.configuration.tombstoneRetention = .seconds(tombstoneDays * 24 * 3600)
        runner.configuration.sessionLifetime = .seconds(sessionDays * 24 * 3600)
        if let passwordHashingConcurrency {
            runner.configuration.passwordHashing.concurrency = passwordHashingConcurrency
        }
        try await runner.run()
    }

    static func defaultStoragePath() -> String {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return base + "/sync-server/server.sqlite"
    }
}
