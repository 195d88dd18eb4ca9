import ContactsModel
import ContactsTesting
import Foundation
import GRDB
import SyncCore
import Testing

@testable import ContactsStore

/// The device file keys contacts by their UUIDs' 16 bytes and names other records by their text
/// (``RecordKey``), and reads a contact's name from its stored row (``StoredContactName``).
@Suite("Contacts keyed by their UUIDs' bytes, named by their rows")
struct RecordKeyTests {
    @Test("a canonical UUID's text is 16 bytes and reads back as itself; any other name stays text")
    func keys() throws {
        let id = UUID()
        #expect(RecordKey.key(named: id.uuidString) == Data(withUnsafeBytes(of: id.uuid) { Array($0) }).databaseValue)
        #expect(RecordKey.name(RecordKey.key(named: id.uuidString)) == id.uuidString)
        #expect(RecordKey.id(RecordKey.key(id)) == id)
        // Lower case, other lengths and other names would not read back byte for byte as bytes.
        for name in [id.uuidString.lowercased(), "book", "", String(id.uuidString.dropLast()), "_" + id.uuidString] {
            #expect(RecordKey.key(named: name) == name.databaseValue)
            #expect(RecordKey.name(RecordKey.key(named: name)) == name)
        }
        // A contact key left as text (as versions before 0.4 kept it) still reads as its contact.
        #expect(RecordKey.id(id.uuidString.databaseValue) == id)
        #expect(RecordKey.id(Data([1, 2, 3]).databaseValue) == nil)
        #expect(RecordKey.name(DatabaseValue.null) == nil)
    }

    @Test("every key column holds 16 bytes for a contact, and a book's record keeps its name")
    func keyColumns() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            _ = try a.store.startChangeLog()
            let ada = try a.contacts.add(Contact(name: "Ada Lovelace")).id
            try a.store.write { transaction in
                try ContactStore.nameResource(ada, "ada.vcf", in: Contact.zoneID, transaction.db)
            }
            try a.books.renameBook(try #require(try a.store.book(Contact.zoneID)), to: "People")
            try await a.sync()
            try await b.sync()
            #expect(try b.store.contacts().map(\.name) == ["Ada Lovelace"])
            #expect(try b.store.books().map(\.name) == ["People"])
            let (contactKeys, recordKeys, changeKeys, resourceKeys) = try await a.store.queue.read { db in
                (
                    try String.fetchAll(db, sql: "SELECT typeof(id) || length(id) FROM contact"),
                    try String.fetchAll(db, sql: "SELECT typeof(id) || ' ' || CAST(id AS TEXT) FROM serverRecord"),
                    try String.fetchAll(db, sql: "SELECT typeof(id) || length(id) FROM contactChange"),
                    try String.fetchAll(db, sql: "SELECT typeof(id) || length(id) FROM resourceName")
                )
            }
            #expect(contactKeys == ["blob16"] && changeKeys == ["blob16"] && resourceKeys == ["blob16"])
            let book = try #require(try a.store.book(Contact.zoneID)).recordID.recordName
            #expect(recordKeys.filter { $0.hasPrefix("text") } == ["text " + book])
            #expect(recordKeys.filter { $0.hasPrefix("blob") }.count == 1)
            #expect(try a.store.serverRecord(ada)?.recordID.recordName == ada.uuidString)
            #expect(try a.store.member(named: "ada.vcf", in: Contact.zoneID)?.id == ada)
            #expect(try a.store.members(of: Contact.zoneID).map(\.id) == [ada])
        }
    }

    @Test("an ID's prefix finds its contact, in either case, with dashes or an odd digit; two that share it are named")
    func prefixes() async throws {
        try await withContactsDevices(1) { _, _, devices in
            let device = devices[0]
            let first = try #require(UUID(uuidString: "0A5B0680-F7B8-4471-84EF-40A8CB9CB66B"))
            let second = try #require(UUID(uuidString: "0A5B0F00-0000-4000-8000-000000000001"))
            let last = try #require(UUID(uuidString: "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF"))
            for (id, name) in [(first, "First"), (second, "Second"), (last, "Last")] {
                _ = try device.contacts.add(Contact(id: id, name: name))
            }
            for text in ["0A5B06", "0a5b068", "0A5B0680-F7", " 0a5b0680-f7b8-4471-84ef-40a8cb9cb66b ", "0A5B0680F7B8"] {
                #expect(try device.store.resolve(text) == first, "\(text)")
            }
            #expect(try device.store.resolve("0A5B0F") == second)
            #expect(try device.store.resolve("F") == last)
            #expect(try device.store.resolve(last.uuidString) == last)
            for text in ["0A5B0", "0A5B", "0"] {
                #expect(throws: ContactError.ambiguousID(text, matches: 2)) { try device.store.resolve(text) }
            }
            for text in ["1", "0A5B0680F7B8447184EF40A8CB9CB66B0", "0A5G", "", "-", "Ada"] {
                #expect(throws: ContactError.unknownID(text)) { try device.store.resolve(text) }
            }
        }
    }

    @Test(
        "the list's names come from the rows in every format; a damaged or hostile row lists as '' and crashes nothing")
    func namesFromRows() async throws {
        try await withContactsDevices(1) { _, _, devices in
            let device = devices[0]
            var contact = Contact(
                name: "Zoë Øberg", emails: [LabeledValue(label: "home", value: "zoe@example.com")]
            ).stamped(against: nil)
            let made = ContactFormat.stored(contact)
            contact.modified[.notes] = Date(timeIntervalSinceReferenceDate: 1)
            let edited = ContactFormat.stored(contact)
            #expect(made.first == CompactContactForm.formatMadeAtOnce && edited.first == CompactContactForm.format)
            let longName = String(repeating: "ł", count: 300)
            let rows: [(Data, String)] = [
                (made, "Zoë Øberg"), (edited, "Zoë Øberg"), (ContactFormat.encode(contact), "Zoë Øberg"),
                (Data([2]) + (try JSONEncoder().encode(contact)), "Zoë Øberg"),
                (ContactFormat.stored(Contact(name: longName)), longName),
                (ContactFormat.stored(Contact(name: "")), ""),
                (Data(), ""), (Data([4]), ""), (Data([5] + [UInt8](repeating: 0, count: 16) + [0xFF, 0xFF]), ""),
                (Data([3] + [UInt8](repeating: 0, count: 16) + [0xFF, 0xFF, 0xFF, 0x7F]), ""), (Data("{".utf8), ""),
            ]
            for (row, name) in rows {
                #expect(try readName(row, device) == name, "\(Array(row.prefix(24)))")
            }
            // Every cut of a stored row reads as a whole name or as none.
            for length in 0..<made.count {
                let read = try readName(made.prefix(length), device)
                #expect(read == "" || read == "Zoë Øberg", "\(length) bytes")
            }
            #expect(try device.store.queue.read { db in try String.fetchOne(db, sql: "SELECT contactName(42)") } == "")
            #expect(
                try device.store.queue.read { db in try String.fetchOne(db, sql: "SELECT contactName(NULL)") } == "")
        }
    }

    private func readName(_ row: Data, _ device: ContactsDevice) throws -> String? {
        try device.store.queue.read { db in try String.fetchOne(db, sql: "SELECT contactName(?)", arguments: [row]) }
    }
}
