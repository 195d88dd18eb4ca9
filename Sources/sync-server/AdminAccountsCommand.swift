import ArgumentParser
import Foundation
import SyncCore
import SyncServer

/// `sync-server admin accounts …`: list, disable, enable and delete accounts.
struct AdminAccountsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts",
        abstract: "List, disable, enable or delete accounts; their storage in use and their quotas.",
        discussion: """
            A disabled account keeps its data and sessions, but every request and push socket of it \
            is refused (notAuthenticated, reason accountDisabled) until it is enabled again; its \
            sessions then work as before. Deleting an account removes its zones, records and shares \
            (the people they were shared with see them go), its places in others' shares and its \
            sessions; its username becomes free.
            """,
        subcommands: [
            List.self, Disable.self, Enable.self, Delete.self, Move.self, AccountsUsageCommand.self,
            AccountsSetQuotaCommand.self,
        ])

    struct Move: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move an account, with everything it owns, to another cluster while it keeps syncing.",
            discussion: """
                Moves the account's records, zones and their history, shares, assets, encryption settings \
                and sessions. Its writes pause for the move: every instance answers them \
                serviceUnavailable with a retry-after, which devices retry; nothing is lost, and devices \
                need no new sign-in. A move that stops half way leaves the account where it was: run it \
                again to finish. Needs the server's clusters (--database and --cluster, or --config).
                """)

        @Argument(help: "The account's username.")
        var username: String

        @Option(help: .init("The cluster to move it to (a --cluster name, or 'main').", valueName: "cluster"))
        var to: String

        @OptionGroup var storage: AdminStorageOptions

        func run() async throws {
            let report = try await storage.withStore { store, _ in
                guard let clusters = store as? ClusteredRecordStore else {
                    throw AdminError(
                        "the server has one database, so there is nowhere to move an account to; give its clusters with --cluster NAME=URL (as the server takes them)"
                    )
                }
                do {
                    return try await clusters.move(username: username, to: to) { line in
                        FileHandle.standardError.write(Data((line + "\n").utf8))
                    }
                } catch let error as SyncError where error.code != .internalError {
                    throw AdminError(error.message)
                }
            }
            let rows = report.rows.reduce(0) { $0 + $1.count }
            print("moved \(report.username) from \(report.from) to \(report.to): \(rows) rows")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print every account: username, user record name, created, sessions, disabled (and cluster).")

        @OptionGroup var storage: AdminStorageOptions

        func run() async throws {
            // Over clusters, each account's cluster too.
            let (rows, clusters) = try await storage.withStore { store, _ in
                let rows = try await store.accountSummaries()
                var clusters: [String: String] = [:]
                if let store = store as? ClusteredRecordStore {
                    for row in rows { clusters[row.userRecordName] = try await store.cluster(ofUsername: row.username) }
                }
                return (rows, clusters)
            }
            let dates = ISO8601DateFormatter()
            let clustered = !clusters.isEmpty
            let table =
                [["USERNAME", "USER RECORD NAME", "CREATED", "SESSIONS", "DISABLED"] + (clustered ? ["CLUSTER"] : [])]
                + rows.map {
                    [
                        $0.username, $0.userRecordName, dates.string(from: $0.createdAt), String($0.sessionCount),
                        $0.isDisabled ? "yes" : "no",
                    ] + (clustered ? [clusters[$0.userRecordName] ?? "?"] : [])
                }
            let widths = table[0].indices.map { column in table.map { $0[column].count }.max() ?? 0 }
            for row in table {
                let cells = zip(row, widths).map { cell, width in
                    cell.padding(toLength: width, withPad: " ", startingAt: 0)
                }
                print(cells.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Refuse every request and push socket of an account, keeping its data and sessions.")

        @Argument(help: "The account's username.")
        var username: String

        @OptionGroup var storage: AdminStorageOptions

        func run() async throws {
            try await storage.withStore { store, hub in
                let account = try await AdminAccountsCommand.account(username, in: store)
                _ = try await store.setDisabled(true, userRecordName: account.userRecordName)
                // Servers on PostgreSQL close the account's open push sockets; their reconnection is refused.
                for (tokenHash, _) in try await store.sessions(userRecordName: account.userRecordName) {
                    await hub.closeSession(tokenHash)
                }
            }
            print("disabled \(username): its requests and push sockets are refused until it is enabled")
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Accept a disabled account's requests again; its sessions work as before.")

        @Argument(help: "The account's username.")
        var username: String

        @OptionGroup var storage: AdminStorageOptions

        func run() async throws {
            try await storage.withStore { store, _ in
                let account = try await AdminAccountsCommand.account(username, in: store)
                _ = try await store.setDisabled(false, userRecordName: account.userRecordName)
            }
            print("enabled \(username)")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an account and everything it owns, for good.",
            discussion: """
                Removes the account's zones and records, the shares it owns (their participants see \
                the zones go), its places in others' shares, its sessions and encryption settings. \
                There is no undo: restore a backup of the storage to get it back.
                """)

        @Argument(help: "The account's username.")
        var username: String

        @Flag(help: "Confirm the deletion; without it nothing is deleted.")
        var yes = false

        @OptionGroup var storage: AdminStorageOptions

        func validate() throws {
            guard yes else {
                throw ValidationError(
                    "deleting \(username) removes its data and shares for good; add --yes to confirm")
            }
        }

        func run() async throws {
            let outcome = try await storage.withStore { store, hub in
                let account = try await AdminAccountsCommand.account(username, in: store)
                return try await AccountRemoval(store: store, pushHub: hub).remove(
                    userRecordName: account.userRecordName, now: Date())
            }
            print(
                "deleted \(username): \(outcome.zonesDeleted) zone(s), \(outcome.sharesLeft) share(s) left, \(outcome.sessionsEnded) session(s) ended"
            )
        }
    }

    /// The account named `username`, or a message naming the command that lists them.
    static func account(_ username: String, in store: any RecordStore) async throws -> StoredAccount {
        guard let account = try await store.account(username: username) else {
            throw AdminError(
                "there is no account named '\(username)'; 'sync-server admin accounts list' lists them")
        }
        return account
    }
}
