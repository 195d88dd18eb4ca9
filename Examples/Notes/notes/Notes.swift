import ArgumentParser
import Foundation
import NotesExample
import SyncKit
import SyncTables

/// `notes`: the example of docs/TABLES.md. Notes with tags and attachments on several devices, synced by
/// SyncTables through a sync server; every command that writes sends at once (unless `--offline`).
@main
struct Notes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes",
        abstract: "Notes with tags and attachments, synced between devices by SyncTables.",
        discussion: """
            The server and account come from SyncKit's container configuration: set SYNCKIT_SERVER, \
            SYNCKIT_USERNAME, SYNCKIT_PASSWORD and SYNCKIT_PASSPHRASE (and SYNCKIT_SIGN_UP=1 to create the \
            account on first use). Each --device keeps its own SQLite file in the data directory.
            """,
        subcommands: [
            Add.self, List.self, Show.self, Edit.self, Tag.self, Delete.self, Sync.self, Status.self,
            Conflicts.self, Share.self, Accept.self,
        ])
}

struct DeviceOptions: ParsableArguments {
    @Option(help: "The device: each has its own database.")
    var device = "default"

    @Option(help: "Where the devices' databases live (default: $XDG_DATA_HOME/notes-example).")
    var dataDir: String?

    /// Opens the device's notebook.
    func notebook() throws -> Notebook {
        let environment = ProcessInfo.processInfo.environment
        let directory =
            dataDir
            ?? (environment["XDG_DATA_HOME"].map { $0 + "/notes-example" }
                ?? NSHomeDirectory() + "/.local/share/notes-example")
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard device.range(of: #"^[A-Za-z0-9._-]{1,64}$"#, options: .regularExpression) != nil, device.first != "."
        else {
            throw ValidationError("the device name \(device) is not 1 to 64 letters, digits, '.', '_' or '-'")
        }
        return try Notebook(path: "\(directory)/\(device).sqlite", container: Container(identifier: "notes"))
    }
}

struct SyncOption: ParsableArguments {
    @Flag(help: "Write on this device only; the next sync sends it.")
    var offline = false

    func send(_ notebook: Notebook) async throws {
        guard !offline else { return }
        try notebook.sync.start()
        try await notebook.sync.sendChanges()
        await notebook.sync.stop()
    }
}

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add a note.")
    @OptionGroup var device: DeviceOptions
    @OptionGroup var sync: SyncOption
    @Argument(help: "The title.") var title: String
    @Option(help: "The text (encrypted on the device).") var body = ""
    @Option(help: "A tag; repeat for more.") var tag: [String] = []
    @Option(help: "A file to attach; repeat for more.") var attach: [String] = []

    func run() async throws {
        let notebook = try device.notebook()
        let files = try attach.map { path in
            (
                name: URL(fileURLWithPath: path).lastPathComponent,
                bytes: try Data(contentsOf: URL(fileURLWithPath: path))
            )
        }
        let id = try notebook.add(title: title, body: body, tags: tag, attachments: files)
        print("added \(id.prefix(8)) \(title)")
        try await sync.send(notebook)
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the notes on this device, newest first.")
    @OptionGroup var device: DeviceOptions

    func run() async throws {
        let notes = try device.notebook().notes()
        if notes.isEmpty { print("No notes.") }
        for note in notes {
            let tags = note.tags.isEmpty ? "" : "  #" + note.tags.joined(separator: " #")
            let files = note.attachments.isEmpty ? "" : "  (\(note.attachments.count) attached)"
            print("\(note.id.prefix(8))  \(note.title)\(tags)\(files)")
        }
    }
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a note.")
    @OptionGroup var device: DeviceOptions
    @Argument(help: "The note's ID, or its start.") var id: String

    func run() async throws {
        let notebook = try device.notebook()
        let full = try notebook.resolve(id)
        guard let note = try notebook.notes().first(where: { $0.id == full }) else { return }
        print(note.title)
        if !note.tags.isEmpty { print("#" + note.tags.joined(separator: " #")) }
        if !note.body.isEmpty { print("\n" + note.body) }
        for file in note.attachments { print("attached: \(file.name) (\(file.size) bytes)") }
    }
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Change a note's title or text.")
    @OptionGroup var device: DeviceOptions
    @OptionGroup var sync: SyncOption
    @Argument(help: "The note's ID, or its start.") var id: String
    @Option(help: "The new title.") var title: String?
    @Option(help: "The new text.") var body: String?

    func run() async throws {
        guard title != nil || body != nil else { throw ValidationError("give --title, --body or both") }
        let notebook = try device.notebook()
        try notebook.edit(id, title: title, body: body)
        try await sync.send(notebook)
    }
}

struct Tag: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Tag a note.")
    @OptionGroup var device: DeviceOptions
    @OptionGroup var sync: SyncOption
    @Argument(help: "The note's ID, or its start.") var id: String
    @Argument(help: "The tag.") var name: String

    func run() async throws {
        let notebook = try device.notebook()
        try notebook.tag(id, with: name)
        try await sync.send(notebook)
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a note with its attachments, everywhere.")
    @OptionGroup var device: DeviceOptions
    @OptionGroup var sync: SyncOption
    @Argument(help: "The note's ID, or its start.") var id: String

    func run() async throws {
        let notebook = try device.notebook()
        try notebook.delete(id)
        try await sync.send(notebook)
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch what changed elsewhere, then send what changed here.")
    @OptionGroup var device: DeviceOptions

    func run() async throws {
        let notebook = try device.notebook()
        try notebook.sync.start()
        try await notebook.sync.sync()
        await notebook.sync.stop()
        let status = notebook.sync.status
        print("\(try notebook.notes().count) notes, \(status.pendingCount) pending, \(status.unappliedCount) waiting")
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "What is not synced yet, and why.")
    @OptionGroup var device: DeviceOptions

    func run() async throws {
        let notebook = try device.notebook()
        let pending = try notebook.sync.pendingChanges()
        let waiting = try notebook.sync.unappliedRecords()
        if pending.isEmpty && waiting.isEmpty { print("Everything is synced.") }
        for change in pending {
            print(
                "pending \(change.operation) \(change.table) \(change.recordName.prefix(8))\(change.heldBecause.map { ": held, \($0)" } ?? "")"
            )
        }
        for record in waiting {
            print("waiting \(record.recordType) \(record.recordID.recordName.prefix(8)): \(record.reason)")
        }
    }
}

struct Conflicts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Values a conflict overwrote (nothing is lost).")
    @OptionGroup var device: DeviceOptions

    func run() async throws {
        let log = try device.notebook().sync.conflictLog()
        if log.isEmpty { print("No conflicts.") }
        for entry in log {
            print(
                "\(entry.table) \(entry.recordName.prefix(8)) \(entry.column): kept \(entry.kept), lost \(entry.lost) (from the \(entry.lostFrom), \(entry.policy))"
            )
        }
    }
}

struct Share: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Share a note (with its tags' links and attachments) with another account.")
    @OptionGroup var device: DeviceOptions
    @Argument(help: "The note's ID, or its start.") var id: String
    @Option(help: "The account to share with.") var with: String
    @Flag(help: "They may read it, not change it.") var readOnly = false

    func run() async throws {
        let notebook = try device.notebook()
        try notebook.sync.start()
        let invitation = try await notebook.sync.share(
            "note", key: try notebook.resolve(id), with: [with], permission: readOnly ? .readOnly : .readWrite)
        await notebook.sync.stop()
        print(invitation)
    }
}

struct Accept: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Accept a shared note: it arrives with its children.")
    @OptionGroup var device: DeviceOptions
    @Argument(help: "The invitation, as `notes share` printed it.") var invitation: String

    func run() async throws {
        let notebook = try device.notebook()
        try notebook.sync.start()
        try await notebook.sync.acceptShare(try ShareInvitation(invitation))
        try await notebook.sync.sync()
        await notebook.sync.stop()
        print("accepted; \(try notebook.notes().count) notes on this device")
    }
}
