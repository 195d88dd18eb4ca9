import ArgumentParser

/// `sync-server admin …`: an operator's tasks on the storage, run beside a running server or
/// without one.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "An operator's tasks on the storage (a SQLite file or a PostgreSQL database).",
        discussion: """
            Each works on the storage directly, whether servers run on it or not; running servers \
            notice what changed by themselves.
            """,
        subcommands: [RotateTokenKeyCommand.self])
}
