import ArgumentParser

/// `sync-server admin …`: an operator's work on the server's storage, beside or without a
/// running server.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        // Parsed apart from sync-server's own options (see SyncServerCommand.main), named as its subcommand.
        _superCommandName: "sync-server",
        abstract: "Operator tasks on the server's storage (a SQLite file or a PostgreSQL database).",
        discussion: """
            These commands open the storage themselves, the way sync-server does (--storage FILE, or \
            --database URL / $SYNC_SERVER_DATABASE), so they work whether or not a server is running \
            on it. A running server sees their changes at the next request of the account concerned.
            """,
        subcommands: [AdminAccountsCommand.self, RotateTokenKeyCommand.self])
}
