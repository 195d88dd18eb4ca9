import ArgumentParser
import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import SyncCore
import VCard

#if canImport(Glibc)
    import Glibc
#endif

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Sync once: fetch changes from the server, then send this device's.",
        discussion: "Exits non-zero when the server cannot be reached or refuses a change; nothing is lost either way.")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Only send this device's changes.") var send = false
    @Flag(help: "Only fetch the server's changes.") var fetch = false
    @Flag(
        help:
            "Also download every contact photo this device does not have (else each is downloaded when shown or exported)."
    )
    var photos = false

    func run() async throws {
        let device = try await Session.open(global, needsServer: true)
        let before = try device.reader.count()
        do {
            try await device.sync(fetch: fetch || !send, send: send || !fetch)
        } catch {
            Session.sayWarnings(device)
            // Nothing is lost: what waits to be sent is said, so the failure does not read as a loss.
            let pending = (try? device.reader.pendingCount()) ?? 0
            let waiting =
                pending == 0
                ? "" : "; \(pending) \(pending == 1 ? "change waits" : "changes wait") on this device for the next sync"
            throw CommandFailure("sync failed: \(CLIWords.say(error, syncing: device))\(waiting)")
        }
        Session.sayWarnings(device)
        let after = try device.reader.count()
        let pending = try device.reader.pendingCount()
        print("synced: \(after) contacts (\(after - before >= 0 ? "+" : "")\(after - before)), \(pending) pending")
        guard photos else { return }
        let (downloaded, failures) = try await device.contacts.downloadMissingPhotos()
        print("photos: \(downloaded) downloaded")
        guard failures.isEmpty else {
            throw CommandFailure(
                "\(failures.count) photos could not be downloaded:\n  " + failures.joined(separator: "\n  ")
                    + "\nsync --photos again to retry")
        }
    }
}

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the account, pending changes, last sync and last error.")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    struct Report: Encodable {
        var device: String
        var dataDirectory: String
        var server: String?
        var localServer: Bool
        var account: String?
        var signedIn: Bool
        var contacts: Int
        /// The books on this device, and how many of them others share with this account.
        var books: Int
        var sharedWithYou: Int
        var pendingChanges: Int
        /// Records sync refused as tampered (`contacts tampered` lists them).
        var tampered: Int
        var lastSync: Date?
        var scheduler: String
        var lastError: String?
        var lastErrorDate: Date?
    }

    func run() async throws {
        let device = try await Session.open(global, needsServer: false)
        let store = device.reader
        func date(_ setting: Setting) throws -> Date? {
            try store.setting(setting).flatMap(Double.init).map(Date.init(timeIntervalSince1970:))
        }
        let books = try store.books()
        let report = Report(
            device: global.device, dataDirectory: global.dataDirectory, server: try store.setting(.serverURL),
            localServer: global.server == nil, account: try store.setting(.username), signedIn: device.isSignedIn,
            contacts: try store.count(), books: books.count, sharedWithYou: books.filter { !$0.isOwn }.count,
            pendingChanges: try store.pendingCount(), tampered: try store.tamperedCount(),
            lastSync: try date(.lastSync),
            scheduler: "not running: the full-screen app syncs by itself; `contacts sync` syncs once",
            lastError: try store.setting(.lastError), lastErrorDate: try date(.lastErrorDate))
        if json {
            print(try ContactJSON.encode(report))
            return
        }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        print("device:     \(report.device) (\(report.dataDirectory))")
        print("server:     \(report.server ?? "none yet")\(report.localServer ? " (local, started by contacts)" : "")")
        print("account:    \(report.signedIn ? (report.account ?? "signed in") : "not signed in")")
        print("contacts:   \(report.contacts)")
        print(
            "books:      \(report.books)\(report.sharedWithYou > 0 ? " (\(report.sharedWithYou) shared with you)" : "")"
        )
        print("pending:    \(report.pendingChanges) change(s) not yet on the server")
        if report.tampered > 0 {
            print("refused:    \(report.tampered) record(s) refused as tampered: see contacts tampered")
        }
        print("last sync:  \(report.lastSync.map(formatter.string(from:)) ?? "never")")
        print("scheduler:  \(report.scheduler)")
        if let error = report.lastError {
            print(
                "last error: \(error.terminalSafe)\(report.lastErrorDate.map { " (at \(formatter.string(from: $0)))" } ?? "")"
            )
        }
    }
}

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Import contacts from vCard files (3.0 or 4.0), CSV exports (Google, Outlook) or folders of them, then sync.",
        discussion: """
            A card or row with a problem is skipped and reported with its line number; the rest are \
            imported. A card whose UID matches a contact updates it; so does a CSV row whose first email \
            is a known contact's. A folder imports every .vcf and .csv file in it. --dry-run shows what \
            would be added, updated and skipped, and changes nothing.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The .vcf or .csv files, or folders, to read ('-' for a vCard file on standard input).")
    var files: [String]
    @Option(help: "The book new contacts go into (default: Contacts).") var book: String?
    @Flag(help: "Show what would be added, updated and skipped; change nothing.") var dryRun = false
    @OptionGroup var edit: EditSyncOptions

    func run() async throws {
        let paths = try files.flatMap(Self.expand)
        guard !paths.isEmpty else { throw CommandFailure("no .vcf or .csv file in \(files.joined(separator: ", "))") }
        let inputs = try paths.map(InputFile.init)
        let device = try await Session.open(global, needsServer: edit.syncs && !dryRun)
        let zoneID = try book.map { try device.reader.resolveBook($0).zoneID }
        var total = (imported: 0, updated: 0)
        var skipped = 0
        for input in inputs {
            let path = input.path
            let name = paths.count > 1 ? "\(path): " : ""
            if dryRun {
                let bytes = try input.readAll()
                let (contacts, problems) =
                    Self.isCSV(path)
                    ? try device.interchange.csvContacts(utf8: bytes) : device.interchange.vCardContacts(utf8: bytes)
                let preview = try device.interchange.preview(contacts, problems: problems)
                for added in preview.added { print("add \(added.terminalSafe)") }
                for updated in preview.updated { print("update \(updated.terminalSafe)") }
                for problem in preview.problems { print("skip \(name)\(problem.message.terminalSafe)") }
                total.imported += preview.added.count
                total.updated += preview.updated.count
                skipped += preview.problems.count
                continue
            }
            let report: ImportReport
            if Self.isCSV(path) {
                let (contacts, problems) = try device.interchange.csvContacts(utf8: try input.readAll())
                report = try device.interchange.importContacts(contacts, into: zoneID)
                for problem in problems { warn(name + problem.message.terminalSafe) }
                skipped += problems.count
            } else {
                report = try importVCards(input, into: zoneID, device)
                for problem in report.problems { warn(name + problem.message.terminalSafe) }
                skipped += report.problems.count
            }
            total.imported += report.imported
            total.updated += report.updated
        }
        if dryRun {
            print("would import \(total.imported), update \(total.updated), skip \(skipped); nothing changed")
            return
        }
        print("imported \(total.imported), updated \(total.updated), skipped \(skipped)")
        await edit.syncAfterEdit(device)
        if total.imported + total.updated == 0 && skipped > 0 {
            throw CommandFailure("nothing imported from \(files.joined(separator: ", "))")
        }
    }

    /// A vCard file, read 4 MiB at a time and imported card by card, with progress on a terminal.
    private func importVCards(_ input: InputFile, into zoneID: RecordZone.ID?, _ device: ContactsDevice) throws
        -> ImportReport
    {
        let showProgress = isatty(2) == 1
        let tell = { (progress: ImportProgress) in
            guard showProgress else { return }
            // Standard input has no size to measure against.
            let percent = input.size == nil ? "" : " (\(Int(progress.fraction * 100)) %)"
            FileHandle.standardError.write(Data("\rimporting: \(progress.cards) cards read\(percent)…".utf8))
        }
        let report = try device.interchange.importVCards(
            reading: { try input.read(upTo: 4 << 20) }, byteCount: input.size ?? 0, into: zoneID, progress: tell)
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        return report
    }

    private static func isCSV(_ path: String) -> Bool { path.lowercased().hasSuffix(".csv") }

    /// A file as it is; a folder as its .vcf and .csv files, by name.
    private static func expand(_ path: String) throws -> [String] {
        var isFolder: ObjCBool = false
        guard path != "-", FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue
        else {
            return [path]
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: path)
        let wanted = names.filter { name in [".vcf", ".csv"].contains { name.lowercased().hasSuffix($0) } }
        return wanted.sorted().map { (path as NSString).appendingPathComponent($0) }
    }
}

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Export every contact as a vCard file (standard output when no file).")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The .vcf file to write (mode 0600; an existing file is replaced whole).") var file: String?
    @Option(help: "vCard version: 3 or 4.") var vcardVersion = 4
    @Option(help: "Only the contacts of this book.") var book: String?
    @Flag(help: "Leave photos out (else a photo this device has not downloaded yet is downloaded first).")
    var withoutPhotos = false

    func validate() throws {
        guard vcardVersion == 3 || vcardVersion == 4 else { throw ValidationError("--vcard-version must be 3 or 4") }
    }

    func run() async throws {
        let device = try await Session.open(global, needsServer: false)
        let zoneID = try book.map { try device.reader.resolveBook($0).zoneID }
        // The cards are written as they are read, a piece at a time: a million contacts are never held at
        // once. A file is written beside its path and takes its place when whole.
        guard let file else {
            // A terminal shows the cards with control characters escaped, so that a contact cannot drive
            // it; a pipe or a redirection gets the exact vCard text.
            let output = StandardOutput()
            let terminal = isatty(STDOUT_FILENO) == 1
            try await export(from: device, book: zoneID) { bytes in
                try output.write(
                    terminal ? Array(Self.forTerminal(String(decoding: bytes, as: UTF8.self)).utf8) : bytes)
            }
            return try output.flush()
        }
        let replacement = try Self.saying { () throws(PrivateFileError) in try PrivateFileReplacement(file) }
        let exported = try await export(from: device, book: zoneID) { bytes in
            try Self.saying { () throws(PrivateFileError) in try replacement.write(bytes) }
        }
        try Self.saying { () throws(PrivateFileError) in try replacement.commit() }
        warn("exported \(exported) contacts to \(file) (readable by you only)")
    }

    /// Writes the cards to `write`; returns how many.
    @discardableResult
    private func export(from device: ContactsDevice, book: RecordZone.ID?, to write: ([UInt8]) throws -> Void)
        async throws -> Int
    {
        do {
            return try await device.interchange.exportVCards(
                version: vcardVersion == 3 ? .v3 : .v4, book: book, photos: !withoutPhotos, to: write)
        } catch let error as SyncError {
            throw CommandFailure(
                "a photo could not be downloaded for the export: \(CLIWords.say(error)); nothing was written (export --without-photos leaves them out)"
            )
        }
    }

    /// `body`'s result, its file error said as the command's failure.
    private static func saying<Result>(_ body: () throws(PrivateFileError) -> Result) throws -> Result {
        do { return try body() } catch { throw CommandFailure(error.description) }
    }

    /// vCard text for a terminal: each line (CR LF) on a line of its own, its content made
    /// ``Swift/String/terminalSafe``.
    static func forTerminal(_ text: String) -> String {
        text.components(separatedBy: "\r\n").map(\.terminalSafe).joined(separator: "\n")
    }
}

struct WipeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wipe", abstract: "Delete this device's local data, or every contact on the server.",
        discussion: """
            --local-data removes this device's copy (the server keeps its own; the next sync downloads it \
            again). --server-data deletes the contacts zone on the server: every device loses every contact. \
            Both need --yes.
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Delete this device's local copy.") var localData = false
    @Flag(help: "Delete every contact on the server and so on every device.") var serverData = false
    @Flag(help: "Confirm.") var yes = false

    func validate() throws {
        guard localData != serverData else {
            throw ValidationError("pass exactly one of --local-data or --server-data")
        }
        guard yes else { throw ValidationError("this deletes contacts; add --yes to confirm") }
    }

    func run() async throws {
        let device = try await Session.open(global, needsServer: serverData)
        if localData {
            try await device.account.deleteLocalData()
            print("deleted the local data of device '\(global.device)'")
        } else {
            try await device.account.deleteServerData()
            print("deleted every contact on the server")
        }
    }
}
