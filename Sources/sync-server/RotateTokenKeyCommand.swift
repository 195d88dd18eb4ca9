import ArgumentParser
import Foundation
import Logging
import SyncServer

/// `sync-server admin rotate-token-key`: a new key signs change tokens from now on; tokens signed
/// with the previous keys are accepted for a grace period, then answered as expired.
struct RotateTokenKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-token-key",
        abstract: "Make a new key for signing change tokens; the previous keys stay valid for a grace period.",
        discussion: """
            Every change token the server hands out is signed with a key kept in the storage, shared \
            by all instances. After this command, running servers sign with the new key within a \
            minute, and accept tokens signed with the previous keys until the grace period ends. A \
            client whose token is refused after that fetches again from the start, which costs it \
            time but loses nothing. Use --grace-days 0 when a key may have leaked: tokens signed \
            with it are refused at once.
            """)

    @Option(help: "The SQLite file the server stores in. (default: the server's default storage)")
    var storage: String?

    @Option(
        name: [.customLong("database-url"), .customLong("database")],
        help: .init(
            "The PostgreSQL database the servers store in (postgres://user:password@host:port/database). Also read from $SYNC_SERVER_DATABASE.",
            valueName: "url"))
    var databaseURL: String?

    @Option(help: "Days the previous keys stay valid (30 is the default tombstone retention).")
    var graceDays: Int = 30

    private var database: String? {
        databaseURL ?? ProcessInfo.processInfo.environment["SYNC_SERVER_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        if databaseURL != nil && storage != nil {
            throw ValidationError(
                "--storage (a SQLite file) and --database-url (PostgreSQL) exclude each other; pass one")
        }
        guard (0...3650).contains(graceDays) else { throw ValidationError("--grace-days must be between 0 and 3650") }
    }

    func run() async throws {
        var logger = Logger(label: "sync-server")
        logger.logLevel = .warning
        let now = Date()
        let until = now.addingTimeInterval(Double(graceDays) * 24 * 3600)
        let key: ChangeTokenKey
        do {
            if let database {
                let store = try await PostgresRecordStore.connect(url: database, logger: logger)
                defer { store.close() }
                key = try await store.rotateChangeTokenKey(now: now, previousValidUntil: until)
            } else {
                let path = storage ?? SyncServerCommand.defaultStoragePath()
                guard FileManager.default.fileExists(atPath: path) else {
                    throw StartupError("there is no storage file at \(path); pass the --storage the server runs with")
                }
                key = try await SQLiteRecordStore(path: path).rotateChangeTokenKey(now: now, previousValidUntil: until)
            }
        } catch let error as StartupError {
            throw error
        } catch let error as SchemaError {
            throw StartupError(error.description)
        } catch {
            throw StartupError("cannot rotate the change-token key: \(error); check that the storage is reachable")
        }
        let formatter = ISO8601DateFormatter()
        print(
            graceDays == 0
                ? "key \(key.id) signs change tokens from now on; tokens signed with earlier keys are refused from now on"
                : "key \(key.id) signs change tokens from now on; tokens signed with earlier keys are accepted until \(formatter.string(from: until))"
        )
    }
}
