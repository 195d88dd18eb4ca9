import ContactsLocal
import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncTesting
import Testing

/// What the programs print when a synced contact carries escape sequences, C1 controls and bidi overrides: a
/// terminal shows them and never acts on them; a file keeps the contact exactly.
@Suite(
    "contacts: synced text reaches a terminal escaped, a file exact", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct TerminalOutputTests {
    /// What another device (or a hostile server) could have put in a contact: an escape sequence that clears
    /// the screen, OSC 52 (writes the clipboard), a bell, a C1 CSI, bidi overrides, isolates and marks.
    static let hostileName = "Eve\u{1B}[2J\u{1B}]52;c;cm0gLXJmIH4=\u{7}\u{9B}31m\u{202E}gpj.exe\u{2066}\u{200F}\u{61C}"
    static let hostileEmail = "eve\u{202E}gro.elpmaxe@example.org"
    static let hostileNote = "first line\nsecond\u{1B}[31m line\u{7F}\u{85}"

    /// A device file holding a contact as a sync would have stored it: the store takes what the server sends.
    static func deviceWithHostileContact(in directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory + "/devices", withIntermediateDirectories: true)
        let store = try ContactStore(path: DataDirectory.Layout(directory).deviceFile("default"))
        try store.saveLocal([
            Contact(
                name: hostileName, emails: [LabeledValue(label: "work\u{202E}", value: hostileEmail)],
                organization: "Org\u{2067}", notes: hostileNote, groups: ["Friends\u{1B}[8m"])
        ])
    }

    /// Independent of the implementation: nothing a terminal acts on or reorders text for.
    static func inertProblems(_ text: String, allowingLineBreaks: Bool) -> [String] {
        text.unicodeScalars.compactMap { scalar in
            // The programs' own line breaks and the tabs between columns.
            if allowingLineBreaks && (scalar == "\n" || scalar == "\r" || scalar == "\t") { return nil }
            let isControl = scalar.properties.generalCategory == .control
            let isBidi = scalar.properties.isBidiControl
            return isControl || isBidi ? "U+" + String(scalar.value, radix: 16, uppercase: true) : nil
        }
    }

    @Test("export to a terminal shows escapes, to a file or a pipe writes the exact vCard")
    func export() async throws {
        try await withTemporaryDirectory { directory in
            try Self.deviceWithHostileContact(in: directory)
            let program = ContactsProgram(dataDirectory: directory)
            // On a terminal (`script` gives the program one, as a person's shell would).
            let onTerminal = try await ChildProcess.run([
                "/usr/bin/script", "-q", "-e", "-c",
                ScriptedEditor.quoted(ContactsProgram.path) + " --data-dir " + ScriptedEditor.quoted(directory)
                    + " export",
                "/dev/null",
            ])
            #expect(onTerminal.status == 0, "\(onTerminal.output)")
            #expect(Self.inertProblems(onTerminal.output, allowingLineBreaks: true) == [], "\(onTerminal.output)")
            // The terminal ends each line with CR LF (its own output processing).
            let shown = onTerminal.output.replacingOccurrences(of: "\r\n", with: "\n")
            #expect(
                shown.contains(
                    "\nFN:Eve^[[2J^[]52\\;c\\;cm0gLXJmIH4=^G<U+009B>31m<U+202E>gpj.exe<U+2066><U+200F><U+061C>\n"),
                "\(onTerminal.output)")
            #expect(onTerminal.output.contains("BEGIN:VCARD"))

            // Into a pipe and into a file: the contact exactly, escaped as RFC 6350 says (a line break is \n).
            let piped = try await program.run(["export"])
            #expect(piped.status == 0, "\(piped.error)")
            let file = directory + "/out.vcf"
            let written = try await program.run(["export", file])
            #expect(written.status == 0, "\(written.error)")
            let fileText = try String(contentsOfFile: file, encoding: .utf8)
            #expect(fileText == piped.output)
            // RFC 6350 escapes the semicolons (and would escape commas and backslashes); nothing else changes.
            let escapedName = Self.hostileName.replacingOccurrences(of: ";", with: "\\;")
            #expect(fileText.contains("\r\nFN:" + escapedName + "\r\n"))
            #expect(fileText.contains("NOTE:first line\\nsecond\u{1B}[31m line\u{7F}\u{85}\r\n"))
            #expect(fileText.contains(Self.hostileEmail))
        }
    }

    @Test("query (mutt and aerc), list, show, groups and JSON pass no control or bidi character")
    func otherCommands() async throws {
        try await withTemporaryDirectory { directory in
            try Self.deviceWithHostileContact(in: directory)
            let program = ContactsProgram(dataDirectory: directory)
            for format in ["mutt", "aerc"] {
                let query = try await program.run(["query", "--format", format, "eve"])
                #expect(query.status == 0, "\(query.error)")
                #expect(Self.inertProblems(query.output, allowingLineBreaks: true) == [], "\(format): \(query.output)")
                // One line per address, fields split by tabs only where the format puts them.
                let lines = query.output.split(separator: "\n").dropFirst(format == "mutt" ? 1 : 0)
                #expect(
                    lines.count == 1
                        && lines.allSatisfy { $0.split(separator: "\t").count == (format == "mutt" ? 3 : 2) })
                #expect(query.output.contains("eve<U+202E>gro.elpmaxe@example.org\tEve^[[2J"), "\(query.output)")
            }
            for arguments in [["list"], ["show", "eve"], ["groups"]] {
                var result = try await program.run(arguments)
                if arguments == ["show", "eve"] {
                    let id = try await program.run(["list"]).output.prefix(8)
                    result = try await program.run(["show", String(id)])
                }
                #expect(result.status == 0, "\(arguments): \(result.error)")
                #expect(
                    Self.inertProblems(result.output, allowingLineBreaks: true) == [], "\(arguments): \(result.output)")
                #expect(
                    result.output.contains("Eve^[[2J") || result.output.contains("Friends^[[8m"),
                    "\(arguments): \(result.output)")
            }
            // JSON escapes them instead (\u202E), which any JSON reader turns back into the exact text.
            let json = try await program.run(["list", "--json"])
            #expect(Self.inertProblems(json.output, allowingLineBreaks: true) == [], "\(json.output)")
            let decoded = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]]
            #expect(decoded?.first?["name"] as? String == Self.hostileName)
        }
    }
}
