import ArgumentParser
import BuildInfo
import Foundation
import Listeners
import Logging
import NIOCore
import NIOPosix
import SyncCore
import SyncServer

@main
struct SyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-server",
        abstract: "A CloudKit-style record server: accounts, zones, records, change tokens and push.",
        discussion: """
            Stores everything in one SQLite file, or with --database in PostgreSQL, where several \
            instances may serve one database; listens on loopback by default, on a Unix socket with \
            --unix-socket, with TLS with --tls-certificate and --tls-key. \
            The API is described in openapi.yaml. Stop it with Ctrl-C or SIGTERM; \
            it finishes the requests in flight first. Operators work on the storage with \
            'sync-server admin' (see 'sync-server admin --help').
            """,
        version: BuildInfo.versionLine(of: "sync-server"))

    @Option(
        help: .init(
            "A file of settings, one 'name = value' per line, named as these options without '--' (database = postgres://…, port = 8443); options given here win over it.",
            valueName: "file"))
    var config: String?

    @Option(help: "The SQLite file to store data in. (default: $XDG_DATA_HOME/sync-server/server.sqlite)")
    var storage: String?

    @Option(
        help: .init(
            "A PostgreSQL database to store data in, instead of a SQLite file: postgres://user:password@host:port/database[?sslmode=disable|prefer|require]; a cluster's nodes as host1:port1,host2:port2 with target_session_attrs=read-write (writes go to whichever is the primary). Also read from $SYNC_SERVER_DATABASE, which keeps the password out of the process list.",
            valueName: "url"))
    var database: String?

    @Option(
        name: .customLong("cluster"),
        help: .init(
            "Another PostgreSQL cluster to place accounts on, as NAME=URL (the URL as --database takes it); give it once per cluster, beside --database, which is the cluster named 'main' and holds the directory of which account lives where. Every instance takes the same clusters.",
            valueName: "name=url"))
    var cluster: [String] = []

    @Option(
        help: .init(
            "Where new accounts go when there are clusters: 'fewest' (the cluster with the fewest accounts) or a cluster's name. (default: fewest)",
            valueName: "rule"))
    var placement: String?

    @Option(
        help:
            "The address to listen on. Use 0.0.0.0 only with TLS (--tls-certificate) or behind a TLS proxy. (default: 127.0.0.1)"
    )
    var host: String?

    @Option(help: "The TCP port to listen on (0 picks a free one). (default: 8080)")
    var port: Int?

    @Option(
        help: .init(
            "Listen on a Unix domain socket at this path, made readable by this user alone (mode 0600) and removed when the server stops. Without --host or --port, on the socket alone; with either, on both.",
            valueName: "path"))
    var unixSocket: String?

    @Option(
        help: .init(
            "Serve TLS on the TCP port with this certificate chain (PEM, the server's certificate first). Needs --tls-key.",
            valueName: "file"))
    var tlsCertificate: String?

    @Option(help: .init("The private key of --tls-certificate (PEM, unencrypted).", valueName: "file"))
    var tlsKey: String?

    @Option(
        help: .init(
            "Serve GET /metrics (Prometheus) on this address of its own, HOST:PORT or [IPV6]:PORT; never on the public listener. (default: off)",
            valueName: "address"))
    var metricsListen: String?

    @Option(help: "bcrypt cost for password hashes (4–31).")
    var bcryptCost: UInt8 = 12

    @Option(help: "Requests per second allowed per user, sustained.")
    var rateLimit: Double = 50

    @Option(help: "Days to keep tombstones; older change tokens get changeTokenExpired.")
    var tombstoneDays: Int = 30

    @Option(help: "Days a session lasts after its last request; then the client signs in again.")
    var sessionDays: Int = 90

    @Option(help: "Days a session lasts at most after sign-in, however often it is used.")
    var sessionMaxDays: Int = 365

    @Option(help: "Password hashes (bcrypt) computed at once. (default: half the cores)")
    var passwordHashingConcurrency: Int?

    @Option(
        help: .init(
            "Seconds a request's head (request line and headers) may take to arrive; then the connection closes.",
            valueName: "seconds"))
    var requestHeadTimeout: Double = Self.http.requestHeadTimeout.wholeSeconds

    @Option(
        help: .init(
            "Seconds a kept-alive connection may wait for its next request; then it closes.", valueName: "seconds"))
    var idleTimeout: Double = Self.http.idleTimeout.wholeSeconds

    @Option(
        help: .init(
            "Seconds a request's body may take to arrive after its head; then the connection closes.",
            valueName: "seconds"))
    var requestBodyTimeout: Double = Self.http.requestBodyTimeout.wholeSeconds

    @Option(help: .init("Most bytes of a request's line and headers; a larger head gets 431.", valueName: "bytes"))
    var maxHeaderBytes: Int = Self.http.maximumHeaderBytes

    @Option(
        help: .init(
            "Most bytes of a request body, as GET /v1/limits states; a larger one gets 413.", valueName: "bytes"))
    var maxRequestBytes: Int = ServerLimits().maximumRequestBytes

    @Option(
        help: .init(
            "Most bytes of one asset (a photo, a file), as GET /v1/limits states; a larger upload is refused.",
            valueName: "bytes"))
    var assetMaxBytes: Int64 = ServerLimits.defaultMaximumAssetBytes

    @Option(
        help: .init(
            "Most connections open at once, push sockets included; beyond it new ones are closed at once.",
            valueName: "n"))
    var maxConnections: Int = Self.http.maximumConnections

    @Option(
        help: .init(
            "Most connections open at once from one client address; beyond it new ones are closed at once.",
            valueName: "n"))
    var maxConnectionsPerAddress: Int = Self.http.maximumConnectionsPerAddress

    @Option(
        help: .init(
            "Storage each account may use, in bytes of stored record fields (a size: 1073741824, 500MB, 5GiB), for accounts without a quota of their own ('sync-server admin accounts set-quota'); 0 or 'unlimited' for no limit.",
            valueName: "size"))
    var quotaBytes = "1GiB"

    @Option(
        help: .init(
            "Push sockets one account may have open on this server; one more is refused when it connects.",
            valueName: "n"))
    var maxPushSocketsPerAccount = SyncServerConfiguration().maximumPushSocketsPerAccount

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    private static let http = SyncServerConfiguration.HTTPLimits()

    /// Reads the configuration file, if `--config` names one, before the options. `admin` is a
    /// command tree of its own, parsed apart: a subcommand of this one would have its `--storage`
    /// taken by this command's option of the same name.
    ///
    /// Swift's tasks run on the event loops that do the server's network and database I/O (NIO's
    /// shared group, which Hummingbird and postgres-nio use) rather than on a pool of their own:
    /// otherwise every `await` on a request or a query hops between two sets of threads, and under
    /// load the server spends more of its time waking threads than working.
    static func main() async {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let arguments = Array(CommandLine.arguments.dropFirst())
        let admin = AdminCommand.configuration.commandName ?? "admin"
        if arguments.first == admin {
            await AdminCommand.main(Array(arguments.dropFirst()))
            return
        }
        // `sync-server help admin …`, as the admin commands' help suggests.
        if arguments.prefix(2) == ["help", admin] {
            await AdminCommand.main(["help"] + arguments.dropFirst(2))
            return
        }
        do {
            let command = try parse(ConfigurationFile.expand(arguments, known: settingNames))
            try await command.run()
        } catch {
            exit(withError: error)
        }
    }

    /// `--quota-bytes` as bytes; nil for no limit.
    static func quota(_ text: String) throws -> Int64? {
        if text.lowercased() == "unlimited" { return nil }
        guard let bytes = ByteCount.parse(text) else {
            throw ValidationError(
                "--quota-bytes must be a size (1073741824, 500MB, 5GiB), or 0 or 'unlimited' for no limit; '\(text)' is not"
            )
        }
        return bytes == 0 ? nil : bytes
    }

    /// The clusters `--cluster NAME=URL` gives, checked: each needs a name and an address, each name once,
    /// and not 'main' (--database's); they need --database; `--placement` needs them and names one of them.
    static func clusterURLs(_ options: [String], database: String?, placement: String?) throws
        -> [(name: String, url: String)]
    {
        let clusters = try options.map { option -> (name: String, url: String) in
            guard let equals = option.firstIndex(of: "="), option.startIndex != equals,
                option.index(after: equals) != option.endIndex
            else {
                throw ValidationError(
                    "--cluster takes NAME=URL, such as eu=postgres://sync@db-eu/sync; '\(option.prefix(80))' is not")
            }
            return (String(option[..<equals]), String(option[option.index(after: equals)...]))
        }
        if !clusters.isEmpty && database == nil {
            throw ValidationError(
                "--cluster needs --database: the main cluster, which holds the directory of which account lives where")
        }
        if clusters.contains(where: { $0.name == "main" }) {
            throw ValidationError("the cluster 'main' is --database's; give the other clusters other names")
        }
        if let placement {
            guard !clusters.isEmpty else {
                throw ValidationError("--placement chooses among clusters; give them with --cluster NAME=URL")
            }
            let names = ["main"] + clusters.map(\.name)
            guard placement == "fewest" || names.contains(placement) else {
                throw ValidationError(
                    "--placement must be 'fewest' or a cluster's name (\(names.joined(separator: ", "))); '\(placement)' is neither"
                )
            }
        }
        return clusters
    }

    /// The options a configuration file may set: every option but `--config`, as spelled on the command line.
    static var settingNames: Set<String> {
        let properties = Mirror(reflecting: Self()).children.compactMap(\.label).map { $0.drop { $0 == "_" } }
        let names = properties.map { name in
            name.reduce(into: "") { spelled, character in
                spelled += character.isUppercase ? "-" + character.lowercased() : String(character)
            }
        }
        return Set(names).subtracting(["config"])
    }

    /// With --unix-socket, TCP only when --host or --port asks for it too.
    private var listensOnTCP: Bool { unixSocket == nil || host != nil || port != nil }

    /// --database, or $SYNC_SERVER_DATABASE.
    private var databaseURL: String? {
        database ?? ProcessInfo.processInfo.environment["SYNC_SERVER_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        if databaseURL != nil && storage != nil {
            throw ValidationError("--storage (a SQLite file) and --database (PostgreSQL) exclude each other; pass one")
        }
        _ = try Self.clusterURLs(cluster, database: databaseURL, placement: placement)
        guard SyncServerConfiguration.bcryptCosts.contains(bcryptCost) else {
            throw ValidationError("--bcrypt-cost must be between 4 and 31")
        }
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535") }
        if let unixSocket, unixSocket.isEmpty { throw ValidationError("--unix-socket needs a path") }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-certificate and --tls-key go together; pass both, or neither")
        }
        if tlsCertificate != nil && !listensOnTCP {
            throw ValidationError(
                "TLS is served on the TCP port, and with --unix-socket alone there is none; add --port, or leave TLS out"
            )
        }
        if let metricsListen, ListenAddress(metricsListen) == nil {
            throw ValidationError("--metrics-listen must be HOST:PORT or [IPV6]:PORT, such as 127.0.0.1:9090")
        }
        guard rateLimit > 0 else { throw ValidationError("--rate-limit must be above 0") }
        guard tombstoneDays >= 1 else { throw ValidationError("--tombstone-days must be at least 1") }
        guard (1...3650).contains(sessionDays) else {
            throw ValidationError("--session-days must be between 1 and 3650")
        }
        guard (1...3650).contains(sessionMaxDays) else {
            throw ValidationError("--session-max-days must be between 1 and 3650")
        }
        if let passwordHashingConcurrency, !(1...1024).contains(passwordHashingConcurrency) {
            throw ValidationError("--password-hashing-concurrency must be between 1 and 1024")
        }
        for (name, seconds) in [
            ("--request-head-timeout", requestHeadTimeout), ("--idle-timeout", idleTimeout),
            ("--request-body-timeout", requestBodyTimeout),
        ] {
            guard seconds.isFinite, (0.1...86_400).contains(seconds) else {
                throw ValidationError("\(name) must be between 0.1 and 86400 seconds")
            }
        }
        guard (1024...1024 * 1024).contains(maxHeaderBytes) else {
            throw ValidationError("--max-header-bytes must be between 1024 and 1048576")
        }
        let smallestRequest = ServerLimits().maximumRecordBytes + 64 * 1024
        guard (smallestRequest...1024 * 1024 * 1024).contains(maxRequestBytes) else {
            throw ValidationError(
                "--max-request-bytes must be between \(smallestRequest) (a record of the largest size, and room around it) and 1073741824"
            )
        }
        guard (1...1024 * 1024 * 1024 * 1024).contains(assetMaxBytes) else {
            throw ValidationError("--asset-max-bytes must be between 1 and 1099511627776 (1 TiB)")
        }
        guard (1...1_000_000).contains(maxConnections) else {
            throw ValidationError("--max-connections must be between 1 and 1000000")
        }
        guard (1...maxConnections).contains(maxConnectionsPerAddress) else {
            throw ValidationError("--max-connections-per-address must be between 1 and --max-connections")
        }
        _ = try Self.quota(quotaBytes)
        guard (1...100_000).contains(maxPushSocketsPerAccount) else {
            throw ValidationError("--max-push-sockets-per-account must be between 1 and 100000")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() async throws {
        var runner = SyncServerRunner(storagePath: storage ?? Self.defaultStoragePath())
        runner.databaseURL = databaseURL
        runner.clusters = try Self.clusterURLs(cluster, database: databaseURL, placement: placement)
        runner.placementRule = placement.map(PlacementRule.init) ?? .fewestAccounts
        runner.host = host ?? "127.0.0.1"
        runner.port = port ?? 8080
        runner.listensOnTCP = listensOnTCP
        runner.unixSocketPath = unixSocket
        if let tlsCertificate, let tlsKey {
            runner.tls = TLSFiles(certificatePath: tlsCertificate, keyPath: tlsKey)
        }
        runner.metricsAddress = metricsListen.flatMap(ListenAddress.init)
        runner.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        runner.configuration.bcryptCost = bcryptCost
        runner.configuration.userRateLimit = .init(requestsPerSecond: rateLimit, burst: rateLimit * 4)
        runner.configuration.tombstoneRetention = .seconds(tombstoneDays * 24 * 3600)
        runner.configuration.sessionLifetime = .seconds(sessionDays * 24 * 3600)
        runner.configuration.sessionMaxLifetime = .seconds(sessionMaxDays * 24 * 3600)
        if let passwordHashingConcurrency {
            runner.configuration.passwordHashing.concurrency = passwordHashingConcurrency
        }
        runner.configuration.limits.maximumRequestBytes = maxRequestBytes
        runner.configuration.limits.maximumAssetBytes = assetMaxBytes
        runner.configuration.defaultQuotaBytes = try Self.quota(quotaBytes)
        runner.configuration.maximumPushSocketsPerAccount = maxPushSocketsPerAccount
        runner.configuration.http = .init(
            requestHeadTimeout: .milliseconds(Int64((requestHeadTimeout * 1000).rounded())),
            idleTimeout: .milliseconds(Int64((idleTimeout * 1000).rounded())),
            requestBodyTimeout: .milliseconds(Int64((requestBodyTimeout * 1000).rounded())),
            maximumHeaderBytes: maxHeaderBytes, maximumConnections: maxConnections,
            maximumConnectionsPerAddress: maxConnectionsPerAddress)
        // Process-wide, so the program's to set up: swift-metrics has one backend per process.
        ServerMetrics.bootstrap()
        do {
            try await runner.run()
        } catch let error as StartupError {
            throw Self.worded(error)
        }
    }

    /// `error` in this command's words: the options that get around it by name.
    static func worded(_ error: StartupError) -> StartupError {
        switch error.reason {
        case .addressInUse(let addresses):
            let options = addresses.count > 1 ? "--port or --metrics-listen" : "--port"
            return StartupError(
                "\(addresses.joined(separator: " or ")) is already in use; stop what listens there or pass another \(options)"
            )
        case .storageInUse(let lockPath):
            return StartupError(
                "another sync-server is already using this storage (\(lockPath) is locked); stop it or pass another --storage"
            )
        case .described:
            return error
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

extension Duration {
    /// Whole seconds, for a default shown in `--help`.
    fileprivate var wholeSeconds: Double { Double(components.seconds) }
}
