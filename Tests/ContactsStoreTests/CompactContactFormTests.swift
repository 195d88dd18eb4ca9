import ContactsModel
import ContactsTesting
import Foundation
import GRDB
import SyncCore
import Testing

@testable import ContactsStore

/// The store keeps contacts in format 4 (``CompactContactForm``) and sends them in format 3, byte for byte
/// what it sent before: devices of earlier versions read what this one sends.
@Suite("Contacts as the device file keeps them (format 4)")
struct CompactContactFormTests {
    /// Contacts that exercise every part of the form: item IDs that are and are not canonical UUIDs, dates
    /// shared and apart, empty strings, non-ASCII text, an edit time of a field a later version added.
    static let contacts: [Contact] = {
        var typical = Contact(
            name: "Liam Nowak", emails: [LabeledValue(label: "home", value: "liam@example.org")],
            phones: [LabeledValue(label: "cell", value: "+49 30 264373"), LabeledValue(label: "work", value: "+49 1")],
            organization: "北京示例有限公司", address: PostalAddress(street: "178 Main Street", city: "Warszawa"),
            notes: "Met at the conference.\nPrefers calls after 6pm.", extras: ["UID:bench-1", "N:Nowak;Liam;;;"])
        let instant = Date(timeIntervalSinceReferenceDate: 785_000_000.123_456)
        for field in Contact.Field.allCases { typical.modified[field] = instant }
        for index in typical.phones.indices { typical.phones[index].modified = instant }

        var odd = RecordFormatTests.contact
        odd.emails.append(LabeledValue(id: "not-a-uuid", label: "", value: ""))
        odd.emails.append(LabeledValue(id: UUID().uuidString.lowercased(), label: "x", value: "y"))
        odd.emails.append(LabeledValue(id: "", label: "", value: "z"))
        odd.phones[0].modified = .distantFuture
        odd.modified[.notes] = Date(timeIntervalSinceReferenceDate: -0.0)

        // More distinct dates than the references remember.
        var many = Contact(name: "Many")
        many.phones = (0..<(CompactContactForm.remembered * 2 + 3)).map { index in
            var item = LabeledValue(label: "l\(index)", value: String(repeating: "9", count: index * 5))
            item.modified = Date(timeIntervalSinceReferenceDate: Double(index % (CompactContactForm.remembered + 5)))
            return item
        }
        // Made by this version: item IDs made from the contact's; one moved by a delete, one from another
        // contact (as a merge of two brings).
        var made = Contact(
            name: "Made Here",
            emails: (0..<3).map { LabeledValue(label: "home", value: "made\($0)@example.org") },
            phones: [LabeledValue(label: "cell", value: "+1 555 0100")]
        ).stamped(against: nil, at: Date(timeIntervalSinceReferenceDate: 785_000_000))
        made.emails.removeFirst()
        made.phones.append(
            Contact(name: "Other", phones: [LabeledValue(label: "", value: "1")]).stamped(against: nil).phones[0])
        return [Contact(name: "A"), typical, odd, many, made]
    }()

    @Test("a contact made here has item IDs made from its own, unlike each other and kept in 2 bytes each")
    func itemIDsOfItsOwn() throws {
        let contact = Contact(
            name: "Grace Hopper", emails: (0..<3).map { LabeledValue(label: "", value: "g\($0)@navy.example") },
            phones: (0..<2).map { LabeledValue(label: "", value: "+1 555 010\($0)") }
        ).stamped(against: nil)
        let ids = (contact.emails + contact.phones).map(\.id)
        #expect(Set(ids).count == 5 && !ids.contains(contact.id.uuidString))
        for (list, items) in [(Contact.ItemList.emails, contact.emails), (.phones, contact.phones)] {
            for (index, item) in items.enumerated() {
                let id = try #require(UUID(uuidString: item.id))
                #expect(item.id == id.uuidString, "canonical text, as every item ID before")
                #expect(id.uuid.6 >> 4 == 8, "UUID version 8")
                #expect(Contact.itemIndex(of: id, in: contact.id, list: list) == UInt8(index))
                #expect(Contact.itemIndex(of: id, in: UUID.random(), list: list) == nil)
            }
        }
        // The same contact with random item IDs takes 15 bytes more an item.
        var random = contact
        for index in random.emails.indices { random.emails[index].id = UUID.random().uuidString }
        for index in random.phones.indices { random.phones[index].id = UUID.random().uuidString }
        #expect(ContactFormat.stored(random).count - ContactFormat.stored(contact).count == 5 * 15)
        // An edit keeps the IDs; an item added later gets a random one.
        var edited = contact
        edited.emails.append(LabeledValue(label: "", value: "new@navy.example"))
        let stamped = edited.stamped(against: contact)
        #expect(stamped.emails.prefix(3).map(\.id) == contact.emails.map(\.id))
        #expect(stamped.emails[3].id == edited.emails[3].id)
    }

    /// Format 3 with edit times of fields this version does not know (a later version wrote them).
    static func wireWithLaterField(_ contact: Contact) -> Data {
        var wire = ContactFormat.encode(contact)
        // The edit-time map is last: its count, then each name and date.
        var writer = StoredBytesWriter(capacity: 64)
        writer.string("aLaterField")
        writer.date(Date(timeIntervalSinceReferenceDate: 1))
        let countOffset = Self.editCountOffset(wire)
        let edits = wire[countOffset..<countOffset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        withUnsafeBytes(of: (edits + 1).littleEndian) { wire.replaceSubrange(countOffset..<countOffset + 4, with: $0) }
        wire.append(contentsOf: writer.bytes)
        return wire
    }

    /// Where format 3's edit-time count is in `wire`.
    static func editCountOffset(_ wire: Data) -> Int {
        wire.withUnsafeBytes { raw in
            var reader = StoredBytesReader(bytes: raw, offset: 17)
            _ = try? reader.slice()
            for _ in 0..<2 {
                for _ in 0..<((try? reader.count()) ?? 0) {
                    for _ in 0..<3 { _ = try? reader.slice() }
                    _ = try? reader.int64()
                }
            }
            for _ in 0..<7 { _ = try? reader.slice() }
            for _ in 0..<((try? reader.count()) ?? 0) { _ = try? reader.slice() }
            return reader.offset
        }
    }

    @Test("format 4 expands to the very bytes of format 3, and reads as the same contact")
    func expandsToTheSameBytes() throws {
        for contact in Self.contacts {
            let wire = ContactFormat.encode(contact)
            let stored = try #require(CompactContactForm.compact(wire), "\(contact.name)")
            #expect(CompactContactForm.isCompact(stored.first))
            #expect(try CompactContactForm.expand(stored) == wire, "\(contact.name)")
            #expect(ContactFormat.stored(contact) == stored)
            #expect(try ContactFormat.decode(stored) == contact, "\(contact.name)")
        }
        let later = Self.wireWithLaterField(Self.contacts[1])
        let stored = try #require(CompactContactForm.compact(later))
        #expect(try CompactContactForm.expand(stored) == later, "a later version's field is kept by name")
    }

    @Test(
        "a contact as it was made, every field at one instant, keeps that instant alone (format 5); any other, format 4"
    )
    func madeAtOnce() throws {
        let typical = Self.contacts[1]
        #expect(ContactFormat.stored(typical).first == CompactContactForm.formatMadeAtOnce)
        var later = typical
        later.modified[.notes] = typical.modified[.notes]?.addingTimeInterval(1)
        var fewer = typical
        fewer.modified[.photo] = nil
        for contact in [later, fewer] {
            let stored = ContactFormat.stored(contact)
            #expect(stored.first == CompactContactForm.format)
            #expect(try CompactContactForm.expand(stored) == ContactFormat.encode(contact))
            #expect(stored.count >= ContactFormat.stored(typical).count + 18, "\(stored.count) bytes")
        }
        let laterField = try #require(CompactContactForm.compact(Self.wireWithLaterField(typical)))
        #expect(laterField.first == CompactContactForm.format)

        // Made here (``Contact/stamped(against:at:)``), then edited.
        let made = Contact(name: "Made", emails: [LabeledValue(label: "", value: "m@example.org")]).stamped(
            against: nil, at: Date(timeIntervalSinceReferenceDate: 785_000_000))
        #expect(ContactFormat.stored(made).first == CompactContactForm.formatMadeAtOnce)
        var edited = made
        edited.organization = "Example"
        let stamped = edited.stamped(against: made, at: Date(timeIntervalSinceReferenceDate: 785_000_060))
        #expect(ContactFormat.stored(stamped).first == CompactContactForm.format)
        #expect(try ContactFormat.decode(ContactFormat.stored(stamped)) == stamped)
    }

    @Test("a typical contact takes about three fifths of format 3")
    func smaller() throws {
        let wire = ContactFormat.encode(Self.contacts[1])
        let stored = ContactFormat.stored(Self.contacts[1])
        #expect(stored.count * 10 < wire.count * 7, "\(stored.count) bytes against \(wire.count)")
    }

    @Test("what is not a whole format-3 contact is kept as it is")
    func notCompacted() throws {
        let wire = ContactFormat.encode(Self.contacts[1])
        for bytes in [Data(), Data([2]) + wire.dropFirst(), wire.dropLast(), wire + Data([0])] {
            #expect(CompactContactForm.compact(bytes) == nil)
            #expect(ContactFormat.stored(wire: bytes) == bytes)
        }
    }

    @Test("a damaged row is a damaged row, never a crash: every cut and every flipped byte")
    func damage() throws {
        for contact in Self.contacts.prefix(3) + [Self.contacts[4]] {
            let stored = ContactFormat.stored(contact)
            for length in 0..<stored.count {
                #expect(throws: ContactError.self) { try CompactContactForm.expand(stored.prefix(length)) }
            }
            for index in stored.indices {
                for flip: UInt8 in [0x01, 0x80, 0xFF] {
                    var bytes = stored
                    bytes[index] ^= flip
                    // Either refused as damage or read as some other whole contact.
                    if let wire = try? CompactContactForm.expand(bytes) {
                        #expect(CompactContactForm.compact(wire) != nil)
                    }
                }
            }
        }
        // A count past what a format-3 count can say.
        var huge = Data([CompactContactForm.format]) + Data(repeating: 0, count: 16) + Data([0])
        huge += Data([0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
        #expect(throws: ContactError.self) { try CompactContactForm.expand(huge) }
    }

    @Test("the device file keeps format 4; what the server holds is format 3; format-3 rows still sync")
    func storeAndWire() async throws {
        try await withContactsDevices { server, _, devices in
            let (a, b) = (devices[0], devices[1])
            let id = try a.contacts.add(Self.contacts[1]).id
            #expect(CompactContactForm.isCompact(try rawRow(a, id).first))
            try await a.sync()
            try await b.sync()
            #expect(CompactContactForm.isCompact(try rawRow(b, id).first), "a fetched contact is kept compact")
            let record = try #require(try b.store.serverRecord(id))
            #expect(record[encrypted: Contact.contactField]?.bytesValue?.first == ContactFormat.binary)
            #expect(try Contact(record: record) == (try a.contact(named: "Liam Nowak")))
            _ = server

            // A row an earlier version stored (format 3) reads, edits and syncs; once saved it is format 4.
            try setRawRow(a, id, ContactFormat.encode(try a.contact(named: "Liam Nowak")))
            #expect(try rawRow(a, id).first == ContactFormat.binary)
            try a.edit("Liam Nowak") { $0.notes = "edited on a" }
            #expect(CompactContactForm.isCompact(try rawRow(a, id).first))
            try await a.sync()
            try await b.sync()
            #expect(try b.contact(named: "Liam Nowak").notes == "edited on a")
        }
    }

    private func rawRow(_ device: ContactsDevice, _ id: UUID) throws -> Data {
        let queue = try DatabaseQueue(path: device.store.path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Data.fetchOne(db, sql: "SELECT json FROM contact WHERE id = ?", arguments: [id]) ?? Data()
        }
    }

    private func setRawRow(_ device: ContactsDevice, _ id: UUID, _ row: Data) throws {
        let queue = try DatabaseQueue(path: device.store.path)
        defer { try? queue.close() }
        try queue.write { db in
            try db.execute(sql: "UPDATE contact SET json = ? WHERE id = ?", arguments: [row, id])
        }
    }
}
