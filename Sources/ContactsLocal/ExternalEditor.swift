import ContactsModel
import Foundation
import LocalSystem

#if canImport(Glibc)
    import Glibc
#endif

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

    /// Runs the editor on `path`, on this process's terminal (its standard input, output and error, in its
    /// process group, so the terminal's keys reach it), and waits for it to exit.
    public func open(_ path: String) throws(Failure) {
        switch TerminalCommand(command: command).run(on: path) {
        case .finished: return
        case .cannotStart(let reason): throw .cannotStart(command: command, reason: reason)
        case .failed(let status): throw .failed(command: command, status: status)
        }
    }

    /// Edits `contact` as a ``ContactTemplate`` until the file reads as a valid contact, and returns it; nil
    /// when the person changed nothing (quit without saving, saved the file as it was shown, or emptied it).
    /// A file with problems opens again with them at its top.
    ///
    /// The file is `contact.txt` (0600) in a directory of its own that `mkdtemp` makes (0700, a name nobody can
    /// guess, in `$TMPDIR`); each version shown is created anew and exclusively (``PrivateFile``), so a link
    /// planted at its path is never followed, and the file the editor saved is read without following one.
    public func edit(_ contact: Contact) throws -> Contact? {
        let directory = try Self.makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/contact.txt"
        var shown = ContactTemplate.text(for: contact)
        while true {
            // Whatever the editor left at the path (a file, or a link) goes: the next version is a new file.
            unlink(file)
            try PrivateFile.create(file, contents: Array(shown.utf8))
            try open(file)
            let edited = String(decoding: try PrivateFile.read(file), as: UTF8.self)
            if edited == shown || ContactTemplate.isEmpty(edited) { return nil }
            do {
                return try ContactTemplate.contact(from: edited, original: contact)
            } catch {
                shown = ContactTemplate.text(edited, with: error.problems)
            }
        }
    }

    /// A new directory, mode 0700 from its creation, in the temporary directory.
    private static func makePrivateDirectory() throws -> String {
        let base = FileManager.default.temporaryDirectory.path
        var template = Array((base + "/contacts-edit-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw PrivateFileError.cannotWrite(path: base, reason: errno)
        }
        return String(cString: made)
    }
}
