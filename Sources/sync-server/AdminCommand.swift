import ArgumentParser

/// `sync-server admin`: operator commands that work on the server's storage directly.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        // Parsed apart from sync-server's own options (see SyncServerCommand.main), named as its subcommand.
        _superCommandName: "sync-server",
        abstract: "Work on the server's storage directly (the SQLite file or the PostgreSQL database).",
        subcommands: [AdminAccountsCommand.self])
}

/// `sync-server admin accounts`.
struct AdminAccountsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts",
        abstract: "Accounts: their storage in use and their quotas.",
        subcommands: [AccountsUsageCommand.self, AccountsSetQuotaCommand.self])
}
