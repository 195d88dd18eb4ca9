import ArgumentParser
import Foundation
import Logging
import SyncServer

/// The storage an admin command works on: the server's SQLite file or its PostgreSQL database.
/// The server may be running: SQLite lets both at the file, and a change shows at its next request.
struct AdminStorageOptions: ParsableArguments {
    @Option(help: "The server's SQLite file. (default: $XDG_DATA_HOME/sync-server/server.sqlite)")
    var storage: String?

    @Option(
        help: .init(
            "The server's PostgreSQL database, instead of a SQLite file: postgres://user:password@host:port/database. Also read from $SYNC_SERVER_DATABASE.",
            valueName: "url"))
    var databaseURL: String?

    private var database: String? {
        databaseURL ?? ProcessInfo.processInfo.environment["SYNC_SERVER_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        if databaseURL != nil && storage != nil {
            throw ValidationError(
                "--storage (a SQLite file) and --database-url (PostgreSQL) exclude each other; pass one")
        }
    }

    /// Runs `body` with the storage opened (and migrated, as the server would), then closes it.
    func with<Result>(_ body: (any RecordStore) async throws -> Result) async throws -> Result {
        if let database {
            var logger = Logger(label: "sync-server-admin")
            logger.logLevel = .error
            let store: PostgresRecordStore
            do {
                store = try await PostgresRecordStore.connect(url: database, logger: logger)
            } catch {
                throw AdminFailure(
                    "cannot use the database: \(error); check the address and that PostgreSQL runs there")
            }
            defer { store.close() }
            return try await body(store)
        }
        let path = storage ?? SyncServerCommand.defaultStoragePath()
        // Opening a missing file would create an empty store: the wrong path, most likely.
        guard FileManager.default.fileExists(atPath: path) else {
            throw AdminFailure(
                "there is no storage file at \(path); pass the server's file with --storage, or its database with --database-url"
            )
        }
        return try await body(try SQLiteRecordStore(path: path))
    }
}

/// `sync-server admin accounts usage [USER]`.
struct AccountsUsageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "usage",
        abstract: "Show each account's storage in use and its quota.",
        discussion: """
            Usage is the bytes of the account's stored record fields (what a participant writes into \
            a zone shared with them counts to the zone's owner). A quota of 'default' is the running \
            server's --quota-bytes (1 GiB unless it was given another).

            Examples:
              sync-server admin accounts usage --storage /var/lib/sync-server/server.sqlite
              SYNC_SERVER_DATABASE=postgres://sync@db/sync sync-server admin accounts usage ada
            """)

    @OptionGroup var storage: AdminStorageOptions

    @Argument(help: "Only this account (its username).")
    var user: String?

    func run() async throws {
        let accounts = try await storage.with { try await $0.accountStorage(username: user) }
        if let user, accounts.isEmpty {
            throw AdminFailure("there is no account named '\(user)'; 'sync-server admin accounts usage' lists them all")
        }
        let rows = accounts.map { account in
            (account.username, ByteCount.describe(account.usedBytes), Self.describe(account.quota))
        }
        let widths = (
            max(4, rows.map(\.0.count).max() ?? 0), max(4, rows.map(\.1.count).max() ?? 0)
        )
        func line(_ columns: (String, String, String)) -> String {
            columns.0.padding(toLength: widths.0, withPad: " ", startingAt: 0) + "  "
                + columns.1.padding(toLength: widths.1, withPad: " ", startingAt: 0) + "  " + columns.2
        }
        print(line(("USER", "USED", "QUOTA")))
        for row in rows { print(line(row)) }
    }

    /// A quota setting for a person.
    static func describe(_ quota: AccountQuota) -> String {
        switch quota {
        case .serverDefault: "default (the server's --quota-bytes)"
        case .unlimited: "unlimited"
        case .bytes(let bytes): ByteCount.describe(bytes)
        }
    }
}

/// `sync-server admin accounts set-quota USER (BYTES|unlimited|default)`.
struct AccountsSetQuotaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-quota",
        abstract: "Give an account a storage quota of its own, or no limit, or the server's default again.",
        discussion: """
            Over its quota, an account's saves that would make it larger are refused with \
            quotaExceeded (nothing of such a request is stored); deletes and saves that shrink it still \
            pass. A quota below what the account uses already is allowed: it then frees space before \
            it can grow. Takes effect at the account's next request, on every instance.

            Examples:
              sync-server admin accounts set-quota ada 5GiB --storage /var/lib/sync-server/server.sqlite
              sync-server admin accounts set-quota ada unlimited --database-url postgres://sync@db/sync
              sync-server admin accounts set-quota ada default
            """)

    @OptionGroup var storage: AdminStorageOptions

    @Argument(help: "The account's username.")
    var user: String

    @Argument(
        help: .init(
            "A size in bytes (or with a unit: 500MB, 5GiB), 'unlimited', or 'default' for the server's --quota-bytes.",
            valueName: "quota"))
    var quota: String

    func validate() throws {
        _ = try Self.parse(quota)
    }

    /// The setting `text` names.
    static func parse(_ text: String) throws -> AccountQuota {
        switch text.lowercased() {
        case "unlimited": return .unlimited
        case "default": return .serverDefault
        default:
            guard let bytes = ByteCount.parse(text) else {
                throw ValidationError(
                    "'\(text)' is not a quota: give a size such as 1073741824, 500MB or 5GiB, 'unlimited' or 'default'")
            }
            guard bytes > 0 else {
                throw ValidationError(
                    "a quota of 0 is ambiguous (--quota-bytes 0 means no limit): write 'unlimited' for no limit, or a size of at least 1 byte"
                )
            }
            return .bytes(bytes)
        }
    }

    func run() async throws {
        let setting = try Self.parse(quota)
        guard let account = try await storage.with({ try await $0.setQuota(username: user, setting) }) else {
            throw AdminFailure("there is no account named '\(user)'; 'sync-server admin accounts usage' lists them all")
        }
        print(
            "\(account.username): quota \(AccountsUsageCommand.describe(account.quota)); uses \(ByteCount.describe(account.usedBytes))"
        )
    }
}

/// An admin command's failure, printed as it is (without the usage text a mistyped option gets).
struct AdminFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
