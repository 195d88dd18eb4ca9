import Foundation

/// An `$EDITOR` for tests: a shell script that, on each run, keeps a copy of the file it was shown
/// (`shown-1.txt`, `shown-2.txt`, … in its directory), then edits the file with that run's sed commands
/// (an empty string, or a run beyond the list: the file is saved as it was).
public enum ScriptedEditor {
    /// Writes the script into `directory` and returns its path.
    public static func make(in directory: String, edits: [String]) throws -> String {
        let quotedDirectory = quoted(directory)
        let cases = edits.enumerated().map { "\($0.offset + 1)) sed -i \(quoted($0.element)) \"$1\" ;;" }
        let script = """
            #!/bin/sh
            n=$(cat \(quotedDirectory)/runs 2>/dev/null || echo 0); n=$((n + 1)); echo $n > \(quotedDirectory)/runs
            cp "$1" \(quotedDirectory)/shown-$n.txt
            case $n in
            \(cases.joined(separator: "\n"))
            esac

            """
        let path = directory + "/editor.sh"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    /// `text` quoted for the shell.
    public static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
