import ArgumentParser
import ContactsModel
import ContactsStore
import Foundation
import SyncCore

/// `contacts tampered`: the records sync refused as forged or rolled back, kept for inspection.
struct TamperedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tampered",
        abstract: "List the records sync refused as tampered (forged, altered or rolled back), newest first.",
        discussion: """
            Contacts, book names and conflict entries are always encrypted on your devices. A record that \
            arrives from the server with a plain value where an encrypted one belongs, with an encrypted \
            value that does not open for its place, or with an older version than this device has seen, \
            was not written by a device of yours as it is: the server (or someone with your account's \
            token) made or replayed it. It is refused: never merged, never sent back, and your own copy \
            stays as it was. Each is kept here with when it came, its book and record, the device and user \
            it claims, what was wrong, and the record as it arrived (with --json).

            Example: contacts tampered --json
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON: an array of refused records, each with the record as it arrived.") var json = false

    /// One refused record, as `--json` prints it.
    struct Entry: Encodable {
        var date: Date
        var book: String
        var zoneName: String
        var ownerName: String
        var recordName: String
        var recordType: String
        var claimedDevice: String?
        var claimedUser: String?
        var reason: String
        var message: String
        /// The record as it arrived; the raw text when it does not read as a record.
        var record: RecordValue?
        var recordText: String?
    }

    func run() async throws {
        let device = try await Session.open(global, needsServer: false)
        let refused = try device.reader.tamperedRecords()
        let books = Dictionary(
            try device.reader.books().map { ($0.zoneID, $0.name) }, uniquingKeysWith: { first, _ in first })
        let entries = refused.map { entry in
            let record = try? JSONReader.decode(RecordValue.self, from: Data(entry.record.utf8))
            let zoneID = RecordZone.ID(zoneName: entry.zoneName, ownerName: entry.ownerName)
            return Entry(
                date: entry.date, book: books[zoneID] ?? entry.zoneName, zoneName: entry.zoneName,
                ownerName: entry.ownerName, recordName: entry.recordName, recordType: entry.recordType,
                claimedDevice: entry.claimedDevice, claimedUser: entry.claimedUser, reason: entry.reason,
                message: entry.message, record: record, recordText: record == nil ? entry.record : nil)
        }
        if json {
            print(try ContactJSON.encode(entries))
            return
        }
        guard !entries.isEmpty else {
            print("Nothing refused: every record device '\(global.device)' received was sealed by this account.")
            return
        }
        print(
            "\(entries.count) record\(entries.count == 1 ? "" : "s") refused as tampered, newest first; none was applied, and this device kept its own copies."
        )
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        for entry in entries {
            print("")
            print(
                "\(formatter.string(from: entry.date))  \(entry.recordType.terminalSafe) \(entry.recordName.terminalSafe) in book \(entry.book.terminalSafe)"
            )
            print("  wrong:   \(entry.reason.terminalSafe): \(entry.message.terminalSafe)")
            let device = entry.claimedDevice.map { "device \"\($0.terminalSafe)\"" } ?? "no device"
            print("  claims:  \(device), saved by user \(entry.claimedUser?.terminalSafe ?? "unknown")")
        }
    }
}
