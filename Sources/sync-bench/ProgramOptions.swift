import ArgumentParser
import SyncTesting

/// The programs a benchmark of whole `contacts` commands runs: release builds next to this one unless given.
struct ProgramOptions: ParsableArguments {
    @Option(help: "Path of the contacts executable (default: next to this one).")
    var contacts: String?

    @Option(help: "Path of the sync-server executable (default: next to this one).")
    var server: String?

    /// Both paths, checked to be executables (an error saying how to build them otherwise).
    func paths() throws -> (contacts: String, server: String) {
        (
            try BenchSupport.executable(contacts, named: "contacts", option: "contacts"),
            try ServerProcess.executable(server)
        )
    }
}
