import ContactsModel
import ContactsStore
import Foundation
import SyncCore
import Testing

@Suite("Contacts: the record a contact syncs as")
struct RecordFormatTests {
    static let contact: Contact = {
        var contact = Contact(
            name: "Zoë \"Q\" 张伟 🙂", emails: [LabeledValue(label: "work\\home", value: "zoe@example.org")],
            phones: [LabeledValue(label: "cell", value: "+1 555 0100"), LabeledValue(label: "", value: "555\n0101")],
            organization: "Ångström", address: PostalAddress(street: "1 Rue de l'Été\tBât. B", city: "Paris"),
            notes: "n", extras: ["X-A:1", "", "\u{1}"])
        contact.emails[0].modified = Date(timeIntervalSince1970: 1_700_000_000.123)
        contact.phones[1].modified = .distantPast
        return contact
    }()

    /// How versions before the hand-written JSON wrote and read the lists.
    static let earlierEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return encoder
    }()

    @Test("a contact written to a record reads back identical")
    func roundTrip() throws {
        let contact = Self.contact
        #expect(try Contact(record: contact.record(base: nil)) == contact)
    }

    /// The record an earlier version wrote for `contact`: one encrypted field per value and per edit time.
    static func earlierRecord(_ contact: Contact) throws -> RecordValue {
        var record = RecordValue(recordType: Contact.recordType, recordID: contact.recordID)
        func put(_ key: String, _ value: some Encodable) throws {
            record[encrypted: key] = .string(String(decoding: try earlierEncoder.encode(value), as: UTF8.self))
        }
        record[encrypted: "name"] = .string(contact.name)
        try put("emails", contact.emails)
        try put("phones", contact.phones)
        record[encrypted: "organization"] = .string(contact.organization)
        try put("address", contact.address)
        record[encrypted: "notes"] = .string(contact.notes)
        try put("extras", contact.extras)
        // The fields those versions had: the photo came later.
        for field in Contact.Field.allCases where field != .photo {
            record[encrypted: field.rawValue + "Modified"] = .date(contact.modificationDate(of: field))
        }
        return record
    }

    @Test("a contact is one encrypted value: nothing in plain, no field per value")
    func oneEncryptedValue() throws {
        let record = Self.contact.record(base: nil)
        #expect(record.fields.isEmpty)
        #expect(Array(record.encryptedValues.keys) == ["contact"])
    }

    @Test(
        "a record an earlier version wrote, one field per value, reads as the same contact; saved again, it is one value"
    )
    func earlierRecordsRead() throws {
        let earlier = try Self.earlierRecord(Self.contact)
        #expect(try Contact(record: earlier) == Self.contact)
        let rewritten = try Contact(record: earlier).record(base: earlier)
        #expect(Array(rewritten.encryptedValues.keys) == ["contact"])
        #expect(rewritten.fields.isEmpty)
        #expect(try Contact(record: rewritten) == Self.contact)
    }

    @Test("a device not yet upgraded edits a contact an upgraded one wrote: each field's newer edit wins")
    func mixedRecordMerges() throws {
        var upgraded = Self.contact
        upgraded.name = "Zoë Quinn"
        upgraded.modified[.name] = Date(timeIntervalSince1970: 1_800_000_000)
        upgraded.modified[.notes] = Date(timeIntervalSince1970: 1_700_000_000)
        var record = upgraded.record(base: nil)
        // The earlier version read the whole-contact field as nothing: empty values from long ago, except
        // the notes it edited now.
        var seenByEarlier = Contact(id: upgraded.id, name: "")
        for field in Contact.Field.allCases { seenByEarlier.modified[field] = .distantPast }
        seenByEarlier.notes = "edited on the old laptop"
        seenByEarlier.modified[.notes] = Date(timeIntervalSince1970: 1_750_000_000)
        for (key, value) in try Self.earlierRecord(seenByEarlier).encryptedValues {
            record.replaceWithoutChange(encrypted: key, by: value)
        }
        let read = try Contact(record: record)
        #expect(read.name == "Zoë Quinn")
        #expect(read.notes == "edited on the old laptop")
        #expect(read.emails == upgraded.emails)
        #expect(read.phones == upgraded.phones)
        #expect(read.address == upgraded.address)
    }

    @Test("a list that does not read is left empty, not guessed")
    func unreadableList() throws {
        var record = try Self.earlierRecord(Self.contact)
        record[encrypted: "emails"] = .string(#"[{"id":"a","label":"x"}]"#)
        record[encrypted: "address"] = .string("not json")
        let contact = try Contact(record: record)
        #expect(contact.emails.isEmpty)
        #expect(contact.address == PostalAddress())
        #expect(contact.phones == Self.contact.phones)
    }
}
