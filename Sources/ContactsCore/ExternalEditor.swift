import Foundation

/// The person's text editor: `$VISUAL`, else `$EDITOR`, else `vi`, run through the shell (so that
/// `EDITOR="code --wait"` works) on a file, with this process's terminal.
public struct ExternalEditor: Sendable {
    /// What went wrong running the editor; nothing was changed.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        case cannotStart(command: String, reason: String)
        case failed(command: String, status: Int32)

        public var description: String {
            switch self {
            case .cannotStart(let command, let reason):
                "the editor '\(command.terminalSafeForMessages)' could not be started (\(reason)); "
                    + "set EDITOR to one that works, such as EDITOR=nano; nothing changed"
            case .failed(let command, let status):
                "the editor '\(command.terminalSafeForMessages)' exited with status \(status); nothing changed"
            }
        }
    }

    public var command: String

    public init(command: String) {
        self.command = command
    }

    /// The editor `environment` names.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let named = [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }
        command = named.first { !$0.allSatisfy(\.isWhitespace) } ?? "vi"
    }

    /// Runs the editor on `path` and waits for it to exit.
    public func open(_ path: String) throws(Failure) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // The path is the shell's $1, never part of the command's text.
        process.arguments = ["-c", command + " \"$1\"", "sh", path]
        do {
            try process.run()
        } catch {
            throw .cannotStart(command: command, reason: "\(error)")
        }
        process.waitUntilExit()
        // The shell's 127 and 126: the command was not found or cannot run.
        if process.terminationStatus == 127 || process.terminationStatus == 126 {
            throw .cannotStart(command: command, reason: "not found or not executable")
        }
        guard process.terminationStatus == 0 else {
            throw .failed(command: command, status: process.terminationStatus)
        }
    }

    /// Edits `contact` as a ``ContactTemplate`` until the file reads as a valid contact, and returns it; nil
    /// when the person changed nothing (quit without saving, saved the file as it was shown, or emptied it).
    /// A file with problems opens again with them at its top.
    public func edit(_ contact: Contact) throws -> Contact? {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "contacts-edit-\(UUID.random().uuidString)")
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("contact.txt")
        var shown = ContactTemplate.text(for: contact)
        while true {
            try Data(shown.utf8).write(to: file)
            try open(file.path)
            let edited = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            if edited == shown || ContactTemplate.isEmpty(edited) { return nil }
            do {
                return try ContactTemplate.contact(from: edited, original: contact)
            } catch {
                shown = ContactTemplate.text(edited, with: error.problems)
            }
        }
    }
}
