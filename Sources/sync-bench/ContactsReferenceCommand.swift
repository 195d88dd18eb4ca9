import ArgumentParser
import ContactsModel
import Foundation
import SyncTesting
import VCard

/// The in-run reference of `sync-bench contacts`, for one count: started by it right after the count's steps,
/// against the same server and on the same files, and saving its figures as JSON (``ContactsReference``).
///
/// A process of its own: Linux counts the peak memory of the process that starts a command to the command, and
/// the reference holds pages of rows, fields and bodies that would then raise every later step's figure.
struct ContactsReferenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contacts-reference",
        abstract: "The in-run reference of `sync-bench contacts` for one count (started by it).",
        shouldDisplay: false)

    @Option(help: "The vCard file the run imported.")
    var cards: String

    @Option(help: "How many contacts it holds.")
    var count: Int

    @Option(help: "The store of the device that imported them (its rows are copied).")
    var deviceFile: String

    @Option(help: "Path of the contacts executable.")
    var contacts: String

    @Option(help: "The server the run synced with (the reference's own account uploads and downloads there).")
    var server: String

    @Option(help: "How many times each part is measured; the median is kept.")
    var runs = 3

    @Option(help: "Where to save the figures, as JSON.")
    var output: String

    /// An import saves 10,000 contacts a transaction (`DeviceInterchange.importBatch`); a download saves each
    /// page it fetches, of the server's default 400 results.
    static let importBatch = 10_000
    static let downloadPage = 400

    func run() async throws {
        let directory = URL(fileURLWithPath: try TemporaryFiles.directory("contacts-bench-reference"))
        defer { try? FileManager.default.removeItem(at: directory) }
        let traffic = try await RecordedTraffic.capture(
            cards: cards, count: count, contacts: contacts, server: server, in: directory)
        let sealed = try SealedFieldsReference(download: traffic.download)
        guard sealed.fields.count >= count else {
            throw BenchError(description: "the download fetched \(sealed.fields.count) sealed fields for \(count)")
        }
        let rows = ContactsRowsReference(source: deviceFile, directory: directory)
        let serverRows = ServerRowsReference(upload: traffic.upload)

        var reference = ContactsReference(
            up: .init(traffic.upload), down: .init(traffic.download), sealedFields: sealed.fields.count)
        for _ in 0..<runs {
            reference.parse.append(try parse())
            let imported = try rows.insert(batch: Self.importBatch, durable: true)
            reference.importInsert.append(imported.seconds)
            reference.read.append(try rows.read(imported.file, expecting: count))
            TemporaryFiles.removeSQLite(imported.file)
            let downloaded = try rows.insert(batch: Self.downloadPage, durable: false)
            reference.downloadInsert.append(downloaded.seconds)
            TemporaryFiles.removeSQLite(downloaded.file)
            let aes = try sealed.measure()
            reference.seal.append(aes.seal)
            reference.open.append(aes.open)
            let server = try serverRows.measure()
            reference.serverInsert.append(server.insert)
            reference.serverRead.append(server.read)
        }
        reference.httpUp = try await RecordedTraffic.replay(traffic.upload, runs: runs)
        reference.httpDown = try await RecordedTraffic.replay(traffic.download, runs: runs)
        try JSONEncoder().encode(reference).write(to: URL(fileURLWithPath: output))
    }

    /// Parses the vCard file as `contacts import` does, 4 MiB at a time, card by card into valid contacts
    /// (`DeviceInterchange.importable`), keeping none; the seconds it took, reading the file included.
    private func parse() throws -> Double {
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: cards))
        defer { try? file.close() }
        let start = ContinuousClock.now
        var cards = StreamedCards(read: { [UInt8](try file.read(upToCount: 4 << 20) ?? Data()) })
        var parsed = 0
        while let (card, _) = try cards.next() {
            var card = card
            _ = ContactPhoto.takeInlineImage(from: &card)
            try ContactValidation.validate(Contact(vCard: card))
            parsed += 1
        }
        let seconds = (ContinuousClock.now - start).inSeconds
        guard parsed == count, cards.problems.isEmpty else {
            throw BenchError(description: "parsed \(parsed) of \(count) cards: \(cards.problems.prefix(3))")
        }
        return seconds
    }
}
