import ArgumentParser
import ContactsCore
import Foundation

@main
struct ContactsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contacts",
        abstract: "Your contacts in the terminal, on every machine, kept in sync and safe offline.",
        discussion: """
            Run with no subcommand to open the full-screen app. The subcommands are for scripts.

            With no --server, contacts uses a sync server of its own on 127.0.0.1, started in the \
            background when needed, with an account made for you; every --device in the same \
            --data-dir syncs through it. Edits are saved locally first and sent when the server answers.
            """,
        subcommands: [
            ListCommand.self, ShowCommand.self, AddCommand.self, EditCommand.self, DeleteCommand.self,
            SyncCommand.self, StatusCommand.self, ImportCommand.self, ExportCommand.self, AccountCommand.self,
            WipeCommand.self, ServerCommand.self, BookCommand.self, QueryCommand.self, AddFromMailCommand.self,
            BirthdaysCommand.self, GroupsCommand.self, DuplicatesCommand.self, MergeCommand.self, ConflictsCommand.self,
        ])

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await runInterface(global)
    }
}

/// The options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(help: "The device (one local database each) to use; two devices sync with each other.")
    var device = "default"

    @Option(help: ArgumentHelp("The sync server's URL, such as http://127.0.0.1:8080.", valueName: "url"))
    var server: String?

    @Option(help: ArgumentHelp("Where contacts keeps its data. (default: $XDG_DATA_HOME/contacts)", valueName: "path"))
    var dataDir: String?

    func validate() throws {
        guard !device.isEmpty, device.count <= 64,
            device.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }),
            !device.hasPrefix(".")
        else {
            throw ValidationError("--device must be 1–64 letters, digits, '-', '_' or '.', such as 'laptop'")
        }
        if let server {
            guard let url = URL(string: server), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ValidationError("--server must be an http:// or https:// URL, such as http://127.0.0.1:8080")
            }
        }
    }

    var dataDirectory: String { dataDir ?? ContactsPaths.defaultDataDirectory() }
}
