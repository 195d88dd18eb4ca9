import ContactsLocal
import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncTesting
import Testing
import VCard

/// `list` and `export` write each contact as they read it, so that a million contacts are never held at
/// once: what they print must still be what the whole list, encoded at once, would have been.
@Suite(
    "contacts: list and export written a piece at a time", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct StreamedOutputTests {
    /// More contacts than one 64 KiB piece of output holds, some with text a terminal or JSON must escape.
    static let count = 1_500

    static func cards() -> String {
        (0..<count).map { index in
            let note = index % 7 == 0 ? "NOTE:line one\\nline \u{202E}two é\r\n" : ""
            return "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Person \(index) Ünïcode\r\nEMAIL:p\(index)@example.org\r\n"
                + "TEL:+44 20 7946 \(1000 + index)\r\n\(note)CATEGORIES:team \(index % 3)\r\nEND:VCARD\r\n"
        }.joined()
    }

    /// A data directory whose default device holds ``count`` contacts; `body` gets the program and the
    /// device's contacts in list order, read straight from its file.
    func withContacts(_ body: (ContactsProgram, [Contact]) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            let imported = try await program.run(["import", "-", "--no-sync"], input: Self.cards())
            #expect(imported.status == 0, "\(imported.error)")
            let contacts = try ContactStore(path: DataDirectory.Layout(directory).deviceFile("default")).contacts()
            try #require(contacts.count == Self.count)
            try await body(program, contacts)
        }
    }

    @Test("list --json is one JSON array, byte for byte what encoding the whole list at once writes")
    func jsonListIsTheWholeArray() async throws {
        try await withContacts { program, contacts in
            let listed = try await program.run(["list", "--json"])
            #expect(listed.status == 0, "\(listed.error)")
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            let whole = String(decoding: try encoder.encode(contacts), as: UTF8.self).terminalSafeJSON + "\n"
            #expect(listed.output.utf8.count > 1 << 16)
            #expect(listed.output == whole)

            // Filtered by a group, still one array, of that group's contacts only.
            let team = try await program.run(["list", "--json", "--group", "team 1"])
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let members = try decoder.decode([Contact].self, from: Data(team.output.utf8))
            #expect(members.map(\.id) == contacts.filter { $0.isInGroup("team 1") }.map(\.id))
        }
    }

    @Test("list prints a line a contact, in list order, and an empty device's JSON is an empty array")
    func listLines() async throws {
        try await withContacts { program, contacts in
            let listed = try await program.run(["list"])
            #expect(listed.status == 0, "\(listed.error)")
            let lines = listed.output.split(separator: "\n")
            #expect(lines.count == contacts.count)
            #expect(lines.map { String($0.prefix(8)) } == contacts.map { String($0.id.uuidString.prefix(8)) })
            let found = try await program.run(["list", "p1499@example"])
            #expect(found.output.split(separator: "\n").count == 1 && found.output.contains("Person 1499"))
            let none = try await program.run(["list", "nobody-here"])
            #expect(none.status != 0 && none.output.isEmpty && none.error.contains("no contact matches"))
        }
        try await withTemporaryDirectory { directory in
            let empty = try await ContactsProgram(dataDirectory: directory).run(["list", "--json"])
            #expect(empty.status == 0 && empty.output == "[\n\n]\n", "\(empty.output) \(empty.error)")
        }
    }

    @Test("export writes every card once, in list order, to a pipe and to a file alike")
    func exportIsEveryCard() async throws {
        try await withContacts { program, contacts in
            let whole = VCardSerializer.serialize(contacts.map { $0.vCard(version: .v4) })
            let piped = try await program.run(["export"])
            #expect(piped.status == 0, "\(piped.error)")
            #expect(piped.output.utf8.count > 1 << 16)
            #expect(piped.output == whole)
            let file = program.dataDirectory + "/all.vcf"
            let written = try await program.run(["export", file])
            #expect(written.status == 0 && written.error.contains("exported \(contacts.count) contacts"))
            #expect(try String(contentsOfFile: file, encoding: .utf8) == whole)
        }
    }

    @Test("a reader that stops early ends the list quietly; a full disk is an error that says so")
    func closedAndFullOutputs() async throws {
        try await withContacts { program, contacts in
            // `set -o pipefail`: the pipeline fails if the list does, as a signal or an error.
            let command = [ContactsProgram.path, "--data-dir", program.dataDirectory, "list"].map(
                ScriptedEditor.quoted)
            let headed = try await ChildProcess.run(
                ["/bin/bash", "-c", "set -o pipefail; " + command.joined(separator: " ") + " | head -n 1"])
            #expect(headed.status == 0, "\(headed.error)")
            #expect(headed.error.isEmpty, "\(headed.error)")
            let firstLine = try await program.run(["list"]).output.split(separator: "\n").first
            #expect(headed.output.split(separator: "\n").first == firstLine && headed.output.contains(contacts[0].name))

            let full = try await ChildProcess.run(
                ["/bin/sh", "-c", command.joined(separator: " ") + " > /dev/full"])
            #expect(full.status != 0)
            #expect(full.error.contains("could not write to standard output: No space left on device"), "\(full.error)")
            let exportFull = try await program.run(["export", "/dev/full"])
            #expect(exportFull.status != 0)
            #expect(exportFull.error.contains("cannot write /dev/full: No space left on device"), "\(exportFull.error)")
        }
    }

    @Test("an export that fails part way leaves the older file whole, and no temporary file beside it")
    func failedExportKeepsTheOldFile() async throws {
        try await withContacts { program, _ in
            let file = program.dataDirectory + "/contacts.vcf"
            try "OLD EXPORT".write(toFile: file, atomically: false, encoding: .utf8)
            // Files of this process may grow to 64 KiB at most (128 blocks of 512 bytes), a write beyond that
            // failing with EFBIG (the signal ignored): the export's text is several times that.
            let command = [ContactsProgram.path, "--data-dir", program.dataDirectory, "export", file].map(
                ScriptedEditor.quoted)
            let limited = try await ChildProcess.run(
                ["/bin/sh", "-c", "ulimit -f 128; trap '' XFSZ; exec " + command.joined(separator: " ")])
            #expect(limited.status != 0)
            #expect(limited.error.contains("cannot write \(file): File too large"), "\(limited.error)")
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "OLD EXPORT")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: program.dataDirectory).filter {
                $0.hasSuffix(".tmp")
            }
            #expect(leftovers.isEmpty, "\(leftovers)")
        }
    }
}
