import ContactsLocal
import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite(
    "Files written for the user alone: 0600, never through a planted link, replaced whole", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct PrivateFileTests {
    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    /// Runs `contacts` under a umask that takes nothing away, as a careless shell profile would.
    static func runWithOpenUmask(_ directory: String, _ arguments: [String], environment: [String: String?] = [:])
        async throws -> ChildProcess.Outcome
    {
        let command = ([ContactsProgram.path, "--data-dir", directory] + arguments).map(ScriptedEditor.quoted)
        return try await ChildProcess.run(
            ["/bin/sh", "-c", "umask 000; exec " + command.joined(separator: " ")], environment: environment)
    }

    @Test("export writes a new file 0600 under umask 000, and replaces an old one in one rename")
    func exportIsPrivateAndAtomic() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            #expect(try await program.run(["add", "--name", "Ada", "--no-sync"]).status == 0)
            let file = directory + "/contacts.vcf"
            let created = try await Self.runWithOpenUmask(directory, ["export", file])
            #expect(created.status == 0, "\(created.error)")
            #expect(try Self.mode(file) == 0o600)

            // An older export, readable by everyone, and a second name for it: replacing writes a new file,
            // so the old one is never seen half-written (its other name still reads it whole).
            try "OLD EXPORT".write(toFile: file, atomically: false, encoding: .utf8)
            chmod(file, 0o644)
            let oldName = directory + "/old-name.vcf"
            #expect(link(file, oldName) == 0)
            #expect(try await program.run(["add", "--name", "Grace", "--no-sync"]).status == 0)
            let replaced = try await Self.runWithOpenUmask(directory, ["export", file])
            #expect(replaced.status == 0, "\(replaced.error)")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.contains("FN:Ada") && text.contains("FN:Grace"))
            #expect(try String(contentsOfFile: oldName, encoding: .utf8) == "OLD EXPORT")
            #expect(try Self.mode(file) == 0o600)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
                $0.hasSuffix(".tmp")
            }
            #expect(leftovers.isEmpty, "\(leftovers)")
        }
    }

    @Test("export to a path where someone planted a symbolic link writes nothing through it")
    func exportRefusesPlantedLink() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            #expect(try await program.run(["add", "--name", "Ada", "--no-sync"]).status == 0)
            // The victim: a file of the user's that the attacker wants overwritten (or read by others).
            let victim = directory + "/victim"
            try "precious".write(toFile: victim, atomically: false, encoding: .utf8)
            let planted = directory + "/shared.vcf"
            #expect(symlink(victim, planted) == 0)
            let result = try await program.run(["export", planted])
            #expect(result.status != 0)
            #expect(result.error.contains("\(planted) is a symbolic link"), "\(result.error)")
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: planted) == victim)
            // A link to nowhere (the attacker's file to be): not created either.
            let dangling = directory + "/dangling.vcf"
            #expect(symlink(directory + "/attacker-reads-this", dangling) == 0)
            #expect(try await program.run(["export", dangling]).status != 0)
            #expect(!FileManager.default.fileExists(atPath: directory + "/attacker-reads-this"))
        }
    }

    @Test("a temporary file is created exclusively: a link planted at its path is neither followed nor replaced")
    func createRefusesPlantedLink() throws {
        let directory = TemporaryFiles.path("private-file")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let victim = directory + "/victim"
        try "precious".write(toFile: victim, atomically: false, encoding: .utf8)
        for target in [victim, directory + "/not-yet"] {
            let path = directory + "/planted-" + UUID().uuidString
            #expect(symlink(target, path) == 0)
            #expect(throws: PrivateFileError.symbolicLink(path: path)) {
                try PrivateFile.create(path, contents: Array("secret".utf8))
            }
            #expect(throws: PrivateFileError.symbolicLink(path: path)) { try PrivateFile.read(path) }
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(!FileManager.default.fileExists(atPath: directory + "/not-yet"))
        // An ordinary file there is not overwritten either: the name must be new.
        #expect(throws: PrivateFileError.cannotWrite(path: victim, reason: EEXIST)) {
            try PrivateFile.create(victim, contents: Array("secret".utf8))
        }
    }

    @Test("the editor's temporary file is 0600 in a 0700 directory of its own, under umask 000")
    func editorTemporaryFile() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            let added = try await program.run(["add", "--name", "Ada", "--no-sync"])
            let id = String(added.output.prefix(8))
            // An editor that reports the modes of the file it was given and of its directory.
            let report = directory + "/modes"
            let editor = directory + "/mode-editor.sh"
            try """
            #!/bin/sh
            stat -c '%a %U' "$1" "$(dirname "$1")" > \(ScriptedEditor.quoted(report))
            """.write(toFile: editor, atomically: true, encoding: .utf8)
            chmod(editor, 0o755)
            let temporary = directory + "/tmp"
            try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
            let result = try await Self.runWithOpenUmask(
                directory, ["edit", id, "--editor", "--no-sync"],
                environment: ["EDITOR": editor, "VISUAL": "", "TMPDIR": temporary])
            #expect(result.status == 0, "\(result.error)")
            let modes = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n").map {
                String($0.split(separator: " ")[0])
            }
            #expect(modes == ["600", "700"], "file and directory modes: \(modes)")
            // Nothing is left behind in the temporary directory.
            #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
        }
    }
}
