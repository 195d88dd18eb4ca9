import ArgumentParser
import Foundation
import LocalSystem

/// Standard output written a piece at a time through a buffer of its own, for a command that prints a
/// line for each of a million contacts: memory stays flat, and a reader that stops early (`| head`) ends
/// the command quietly instead of with an error.
final class StandardOutput {
    private var buffer: [UInt8] = []
    private let capacity = 1 << 16

    init() {
        buffer.reserveCapacity(capacity)
        // A closed pipe fails the write with EPIPE (handled below) instead of ending the process by a signal,
        // which a shell with `set -o pipefail` would report as a failure.
        signal(SIGPIPE, SIG_IGN)
    }

    func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= capacity { try flush() }
    }

    func write(_ bytes: [UInt8]) throws {
        buffer += bytes
        if buffer.count >= capacity { try flush() }
    }

    /// Writes what the buffer holds.
    func flush() throws {
        guard !buffer.isEmpty else { return }
        defer { buffer.removeAll(keepingCapacity: true) }
        guard let failure = buffer.withUnsafeBytes({ DescriptorIO.writeAll($0, to: STDOUT_FILENO) }) else { return }
        // The reader has gone (a pager quit, `head` had enough): nothing is wrong, and nothing more is wanted.
        if failure == EPIPE { throw ExitCode.success }
        throw CommandFailure(
            "could not write to standard output: \(String(cString: strerror(failure))); check the disk or the pipe it goes to"
        )
    }
}
