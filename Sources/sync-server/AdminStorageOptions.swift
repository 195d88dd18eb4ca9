import ArgumentParser
import Foundation
import Logging
import SyncServer

/// Where an `admin` command finds the server's storage: the options `sync-server` itself takes.
struct AdminStorageOptions: ParsableArguments {
    @Option(
        help: .init(
            "The server's configuration file (as 'sync-server --config' reads it): its storage or database is the one used, unless --storage or --database is given. Its other settings are the server's own.",
            valueName: "file"))
    var config: String?

    @Option(
        help: .init(
            "The server's SQLite file. (default: $XDG_DATA_HOME/sync-server/server.sqlite)", valueName: "file"))
    var storage: String?

    @Option(
        name: [.customLong("database"), .customLong("database-url")],
        help: .init(
            "The server's PostgreSQL database, instead of a SQLite file: postgres://user:password@host:port/database. Also read from $SYNC_SERVER_DATABASE.",
            valueName: "url"))
    var database: String?

    @Option(
        name: .customLong("cluster"),
        help: .init(
            "Another PostgreSQL cluster of the server, as NAME=URL, as 'sync-server --cluster' takes it; once per cluster.",
            valueName: "name=url"))
    var clusters: [String] = []

    private var databaseURL: String? {
        database ?? ProcessInfo.processInfo.environment["SYNC_SERVER_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        if databaseURL != nil && storage != nil {
            throw ValidationError("--storage (a SQLite file) and --database (PostgreSQL) exclude each other; pass one")
        }
    }

    /// Where the storage is: the options and $SYNC_SERVER_DATABASE first, then the configuration file,
    /// then the server's default file.
    private func location() throws -> (storage: String, databaseURL: String?, clusters: [String]) {
        if storage != nil || databaseURL != nil {
            return (storage ?? SyncServerCommand.defaultStoragePath(), databaseURL, clusters)
        }
        guard let config else { return (SyncServerCommand.defaultStoragePath(), nil, clusters) }
        // The file's settings as options; only the storage's are an admin command's business.
        let options: [String]
        do {
            options = try ConfigurationFile.expand(["--config", config], known: SyncServerCommand.settingNames)
        } catch let error as ValidationError {
            throw AdminError(error.message)
        }
        func setting(_ name: String) -> String? {
            options.firstIndex(of: "--" + name).flatMap { options.indices.contains($0 + 1) ? options[$0 + 1] : nil }
        }
        if let database = setting("database") {
            guard setting("storage") == nil else {
                throw AdminError(
                    "\(config) sets both storage and database, which exclude each other (the server refuses to start so); remove one"
                )
            }
            let fileClusters = options.indices.filter { options[$0] == "--cluster" && $0 + 1 < options.count }
                .map { options[$0 + 1] }
            return ("", database, fileClusters + clusters)
        }
        guard let file = setting("storage") else {
            throw AdminError(
                "\(config) sets neither storage nor database: the server then uses \(SyncServerCommand.defaultStoragePath()); pass --storage with the file it uses"
            )
        }
        return (file, nil, clusters)
    }

    /// Runs `body` with the store and a push hub whose notices reach the running servers'
    /// sockets where that is possible (PostgreSQL's instances listen for them; a SQLite server
    /// in another process cannot be reached).
    func withStore<T>(_ body: (any RecordStore, PushHub) async throws -> T) async throws -> T {
        var logger = Logger(label: "sync-server-admin")
        logger.logLevel = .error
        let (path, databaseURL, clusterOptions) = try location()
        if databaseURL == nil && !clusterOptions.isEmpty {
            throw AdminError(
                "--cluster needs --database: the main cluster, which holds the directory of which account lives where")
        }
        if let databaseURL, !clusterOptions.isEmpty {
            let clusters: [(name: String, url: String)]
            do {
                clusters = try SyncServerCommand.clusterURLs(clusterOptions, database: databaseURL, placement: nil)
            } catch let error as ValidationError {
                throw AdminError(error.message)
            }
            let store: ClusteredRecordStore
            do {
                store = try await ClusteredRecordStore.connect(
                    clusters: [("main", databaseURL)] + clusters, placementRule: .fewestAccounts, logger: logger)
            } catch {
                throw AdminError("\(error)")
            }
            defer { store.close() }
            let (hub, _) = await SyncServerApplication.push(for: store, logger: logger)
            return try await body(store, hub)
        }
        if let databaseURL {
            let store: PostgresRecordStore
            do {
                store = try await PostgresRecordStore.connect(url: databaseURL, logger: logger)
            } catch {
                throw AdminError(
                    "cannot use the database: \(String(describing: error)); check the address and that PostgreSQL runs there"
                )
            }
            defer { store.close() }
            let (hub, _) = await SyncServerApplication.push(for: store, logger: logger)
            return try await body(store, hub)
        }
        // Opening would create an empty storage: an operator who mistyped the path must hear it.
        guard FileManager.default.fileExists(atPath: path) else {
            throw AdminError(
                "there is no storage file at \(path); pass --storage with the file the server uses (or --database)")
        }
        let store: SQLiteRecordStore
        do {
            store = try SQLiteRecordStore(path: path)
        } catch {
            throw AdminError("cannot open the storage file \(path): \(error)")
        }
        return try await body(store, PushHub())
    }
}

/// Why an `admin` command could not do its work; printed as it is, without the usage text.
struct AdminError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
