import ArgumentParser
import Foundation
import Logging
import SyncServer

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
        let accounts = try await storage.withStore { store, _ in try await store.accountStorage(username: user) }
        if let user, accounts.isEmpty {
            throw AdminError("there is no account named '\(user)'; 'sync-server admin accounts usage' lists them all")
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
        guard
            let account = try await storage.withStore({ store, _ in try await store.setQuota(username: user, setting) })
        else {
            throw AdminError("there is no account named '\(user)'; 'sync-server admin accounts usage' lists them all")
        }
        print(
            "\(account.username): quota \(AccountsUsageCommand.describe(account.quota)); uses \(ByteCount.describe(account.usedBytes))"
        )
    }
}
