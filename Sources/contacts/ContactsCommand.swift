import ArgumentParser
import BuildInfo
import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import SyncClient

@main
struct ContactsCommand: AsyncParsableCommand {
    /// Runs the command; a library's error is said in this program's words (``CLIWords``).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: CLIWords.translated(error))
        }
    }

    static let configuration = CommandConfiguration(
        commandName: "contacts",
        abstract: "Your contacts in the terminal, on every machine, kept in sync and safe offline.",
        discussion: """
            Run with no subcommand to open the full-screen app. The subcommands are for scripts.

            With no --server, contacts uses a sync server of its own on a Unix socket in the data \
            directory, started in the background when needed, with an account made for you; every \
            --device in the same --data-dir syncs through it. Edits are saved locally first and sent \
            when the server answers.
            """,
        version: BuildInfo.versionLine(of: "contacts"),
        subcommands: [
            ListCommand.self, ShowCommand.self, AddCommand.self, EditCommand.self, DeleteCommand.self,
            SyncCommand.self, StatusCommand.self, ImportCommand.self, ExportCommand.self, AccountCommand.self,
            WipeCommand.self, ServerCommand.self, BookCommand.self, QueryCommand.self, AddFromMailCommand.self,
            BirthdaysCommand.self, GroupsCommand.self, DuplicatesCommand.self, MergeCommand.self, ConflictsCommand.self,
            TamperedCommand.self, PhotoCommand.self, DAVCommand.self,
        ])

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await runInterface(global)
    }
}

/// The options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(help: "The device (one local database each) to use; two devices sync with each other.")
    var device = DataDirectory.defaultDevice

    @Option(
        help: ArgumentHelp(
            "The sync server's URL, such as https://sync.example.org; http:// only for this machine unless --allow-insecure-http.",
            valueName: "url"))
    var server: String?

    @Option(
        help: ArgumentHelp(
            "A PEM file of the certificate authorities that may vouch for an https:// server, such as one with a certificate of its own making. (default: $SYNCKIT_CA_FILE, else the system's)",
            valueName: "file"))
    var caFile: String?

    @Flag(
        help:
            "Send the password and token over plain http:// to a server that is not this machine. Anyone on the network path can read them: only for a network that is yours end to end."
    )
    var allowInsecureHTTP = false

    @Option(help: ArgumentHelp("Where contacts keeps its data. (default: $XDG_DATA_HOME/contacts)", valueName: "path"))
    var dataDir: String?

    @Flag(
        help:
            "Sync at once even while this machine is busy. By default automatic sync waits while the load is high (above 1.5 per core), for a minute at most."
    )
    var syncWhenBusy = false

    func validate() throws {
        guard !device.isEmpty, device.count <= 64,
            device.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }),
            !device.hasPrefix(".")
        else {
            throw ValidationError("--device must be 1–64 letters, digits, '-', '_' or '.', such as 'laptop'")
        }
        if let server {
            guard let url = URL(string: server), (try? ServerEndpoint(url)) != nil else {
                throw ValidationError(
                    "--server must be an https://, http:// or http+unix:// URL, such as https://sync.example.org")
            }
        }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ValidationError("--ca-file \(caFile) cannot be read; give the path of a PEM certificate file")
        }
    }

    var dataDirectory: String { dataDir ?? ContactsPaths.defaultDataDirectory() }

    /// The server to use instead of the local one, if any (checked by ``validate()``).
    var serverURL: URL? { server.flatMap(URL.init(string:)) }

    /// How requests trust the server: the flags, else the environment.
    var transportSecurity: TransportSecurity {
        var security = TransportSecurity.fromEnvironment()
        if let caFile { security.caFile = caFile }
        if allowInsecureHTTP { security.allowsInsecureHTTP = true }
        return security
    }
}
