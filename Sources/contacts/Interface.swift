import ContactsLocal
import ContactsModel
import ContactsStore
import ContactsTUI
import Foundation
import Logging
import Terminal

#if canImport(Glibc)
    import Glibc
#endif

/// Opens the full-screen app.
///
/// The app works offline: every contact is on this device, and edits are saved here first. So when the
/// server cannot be reached at launch (the local server does not start, or signing in to it fails), the app
/// still opens, with automatic sync on; the status pane shows the error, and the scheduler keeps trying
/// and recovers by itself once the server answers.
func runInterface(_ global: GlobalOptions) async throws {
    guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
        throw CommandFailure(
            "the full-screen app needs a terminal; in scripts use the subcommands, such as `contacts list` (see contacts --help)"
        )
    }
    // Nothing may write to the screen behind curses' back.
    LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
    let device: ContactsDevice
    var problem: String?
    do {
        device = try await Session.open(global, needsServer: true, automaticallySync: true)
    } catch {
        // The reason says what it could not reach (the local server, or the sync server at its URL).
        problem = "opened offline: \(CLIWords.say(error))"
        device = try await Session.open(global, needsServer: false, automaticallySync: true)
    }
    // With the zero-setup server, the app starts it again if it dies while the app is open.
    let keeper =
        global.server == nil
        ? LocalServerKeeper(
            server: Session.localServer(global.dataDirectory),
            device: device) : nil
    let app = await ContactsApp(device: device, startupProblem: problem, serverKeeper: keeper)
    do {
        try await app.run()
    } catch let error as CursesTerminalError {
        throw CommandFailure(error.description)
    }
}
