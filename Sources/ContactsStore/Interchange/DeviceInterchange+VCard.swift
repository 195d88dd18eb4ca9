import ContactsModel
import Foundation
import GRDB
import SyncCore
import SyncKit
import VCard

/// What an import did: how many contacts it added or updated, and the cards it skipped and why.
public struct ImportReport: Sendable {
    public var imported = 0
    public var updated = 0
    public var problems: [VCardProblem] = []
}

/// How far an import has come, for a progress display.
public struct ImportProgress: Sendable {
    /// Cards read so far.
    public var cards: Int
    /// The part of the input read so far, from 0 to 1.
    public var fraction: Double
}

extension DeviceInterchange {
    /// Imports every valid card in `text`; a card with a problem is skipped and reported with its
    /// line number, and the rest are imported. A card whose UID is a known contact updates it.
    public func importVCards(
        _ text: String, into book: RecordZone.ID? = nil, progress: (ImportProgress) -> Void = { _ in }
    ) throws -> ImportReport {
        try importVCards(utf8: Array(text.utf8), into: book, progress: progress)
    }

    /// Imports a UTF-8 vCard file as ``importVCards(_:progress:)`` does, card by card: every 10,000 cards
    /// are saved in one transaction (with a 16 MiB page cache that holds what it changes), so that a large
    /// file is never held as cards or contacts all at once. At 100,000 contacts, batches of 1,000 with
    /// SQLite's default cache took 15 – 18 s; these take 8 s.
    public func importVCards(
        utf8 bytes: [UInt8], into book: RecordZone.ID? = nil, progress: (ImportProgress) -> Void = { _ in }
    ) throws -> ImportReport {
        var unread = Optional(bytes)
        return try importVCards(
            reading: { unread.take() ?? [] }, byteCount: bytes.count, into: book, progress: progress)
    }

    /// Imports a UTF-8 vCard file that `read` returns piece by piece (nothing at its end), as
    /// ``importVCards(utf8:into:progress:)`` does, holding only a piece at a time (``StreamedCards``).
    /// `byteCount`, the file's size, measures progress.
    public func importVCards(
        reading read: @escaping () throws -> [UInt8], byteCount: Int, into book: RecordZone.ID? = nil,
        progress: (ImportProgress) -> Void = { _ in }
    ) throws -> ImportReport {
        try importing(into: book) { book in
            try importCards(StreamedCards(read: read), byteCount: byteCount, into: book, progress: progress)
        }
    }

    /// How many contacts an import saves per transaction.
    static let importBatch = 10_000

    /// Runs an import into `book` (the default one when nil), once it is known to be writable. (The store's
    /// page cache, ``ContactStore/pageCacheKiB``, holds what a transaction of ``importBatch`` contacts changes.)
    func importing(into book: RecordZone.ID?, _ body: (RecordZone.ID) throws -> ImportReport) throws -> ImportReport {
        let book = book ?? Contact.zoneID
        try store.queue.read { db in try DeviceContacts.checkWritable(book, db) }
        return try body(book)
    }

    /// The contact a card makes, or why the card is skipped.
    static func importable(_ card: VCard, line: Int) -> Result<Contact, VCardProblem> {
        let contact = Contact(vCard: card)
        do {
            try ContactValidation.validate(contact)
            return .success(contact)
        } catch {
            return .failure(VCardProblem(line: line, message: "line \(line): \(error) (card skipped)"))
        }
    }

    private func importCards(
        _ cards: StreamedCards, byteCount: Int, into book: RecordZone.ID, progress: (ImportProgress) -> Void
    ) throws -> ImportReport {
        var cards = cards
        var report = ImportReport()
        var batch: [Contact] = []
        var read = 0
        func tell() {
            progress(
                ImportProgress(cards: read, fraction: min(1, Double(cards.bytesRead) / Double(max(byteCount, 1)))))
        }
        func save() throws {
            let counts = try saveImported(batch, into: book)
            report.imported += counts.added
            report.updated += counts.updated
            batch.removeAll(keepingCapacity: true)
        }
        while let (card, line) = try cards.next() {
            read += 1
            if read % 1_000 == 0 { tell() }
            // The photo's image goes to its file now (a batch holds contacts, not their images), taken from
            // the card before the contact is made: written into the extras and read back, it took most
            // of an import of contacts with photos.
            var card = card
            let photo = ContactPhoto.takeInlineImage(from: &card)
            switch Self.importable(card, line: line) {
            case .success(var contact):
                if let photo {
                    contact.photo = try photos.keep(photo.bytes, mediaType: photo.mediaType, durable: false)
                }
                batch.append(contact)
            case .failure(let problem): report.problems.append(problem)
            }
            if batch.count == Self.importBatch { try save() }
        }
        try save()
        if read == 0 || read % 1_000 != 0 { tell() }
        report.problems += cards.problems
        report.problems.sort { $0.line < $1.line }
        return report
    }

    /// Saves imported contacts and queues them, in one transaction: a card whose UID matches a contact
    /// updates it (keeping the edit times of the fields it does not change).
    func saveImported(_ contacts: [Contact], into book: RecordZone.ID) throws -> (added: Int, updated: Int) {
        guard !contacts.isEmpty else { return (0, 0) }
        // The images the contacts name (an import keeps them without a flush each) are on the disk before
        // the contacts are.
        try photos.flush()
        let now = options.clock()
        let updated = try write { transaction in
            let db = transaction.db
            let time = try EditClock.stamp(now: now, db)
            var updated = 0
            // In the order of their IDs (cards of one ID in the file's order, so that the last one wins as
            // before): contacts are keyed by random IDs, and rows written in key order touch a few pages
            // of each index instead of one page per contact, here, in the upload that sends them in
            // this order, on the server, and on the devices that download them.
            let keys = contacts.map(\.id.canonicalString)
            let order = contacts.indices.sorted { (keys[$0], $0) < (keys[$1], $1) }
            for contact in order.lazy.map({ contacts[$0] }) {
                let stamped: Contact
                // A card that names a known contact updates it in the book it is in.
                let old = try ContactStore.contact(contact.id, db)
                let zoneID = old == nil ? book : try ContactStore.book(of: contact.id, db) ?? book
                if zoneID != book { try DeviceContacts.checkWritable(zoneID, db) }
                if let old {
                    var merged = contact
                    merged.modified = old.modified
                    stamped = merged.stamped(against: old, at: time)
                    updated += 1
                } else {
                    stamped = contact.stamped(against: nil, at: time)
                }
                try ContactStore.put(stamped, in: zoneID, db)
                try transaction.enqueue(.record(.saveRecord(stamped.recordID(in: zoneID))))
            }
            return updated
        }
        return (contacts.count - updated, updated)
    }
}
