import Foundation
import LocalSystem

/// A command the person chose (an editor, a photo viewer), run through the shell on one file with this
/// process's terminal: its standard input, output and error, so that the terminal's keys reach it.
struct TerminalCommand: Sendable {
    var command: String

    /// Why it did not run to a clean end.
    enum Outcome: Sendable, Equatable {
        case finished
        case cannotStart(reason: String)
        case failed(status: Int32)
    }

    /// Runs the command on `path` (the shell's `$1`, never part of the command's text) and waits for it.
    func run(on path: String) -> Outcome {
        let process: ChildProcess
        do {
            process = try ChildProcess(
                ["/bin/sh", "-c", command + " \"$1\"", "sh", path], input: .inherited, output: .inherited,
                error: .inherited)
        } catch {
            return .cannotStart(reason: "\(error)")
        }
        let status = process.wait().status
        // The shell's 127 and 126: the command was not found or cannot run.
        if status == 127 || status == 126 { return .cannotStart(reason: "not found or not executable") }
        return status == 0 ? .finished : .failed(status: status)
    }
}
