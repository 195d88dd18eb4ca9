import ContactsCore
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

    static let earlierDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }()

    @Test("a contact written to a record reads back identical")
    func roundTrip() throws {
        let contact = Self.contact
        #expect(try Contact(record: contact.record(base: nil)) == contact)
    }

    @Test("the lists and the address read as earlier versions read them, and what they wrote reads here")
    func earlierVersionsAgree() throws {
        let contact = Self.contact
        let record = contact.record(base: nil)
        func text(_ key: String) throws -> Data {
            Data(try #require(record[encrypted: key]?.stringValue).utf8)
        }
        #expect(try Self.earlierDecoder.decode([LabeledValue].self, from: text("emails")) == contact.emails)
        #expect(try Self.earlierDecoder.decode([LabeledValue].self, from: text("phones")) == contact.phones)
        #expect(try Self.earlierDecoder.decode(PostalAddress.self, from: text("address")) == contact.address)
        #expect(try Self.earlierDecoder.decode([String].self, from: text("extras")) == contact.extras)

        var earlier = record
        func put(_ key: String, _ value: some Encodable) throws {
            earlier[encrypted: key] = .string(String(decoding: try Self.earlierEncoder.encode(value), as: UTF8.self))
        }
        try put("emails", contact.emails)
        try put("phones", contact.phones)
        try put("address", contact.address)
        try put("extras", contact.extras)
        #expect(try Contact(record: earlier) == contact)
    }

    @Test("a list that does not read is left empty, not guessed")
    func unreadableList() throws {
        var record = Self.contact.record(base: nil)
        record[encrypted: "emails"] = .string(#"[{"id":"a","label":"x"}]"#)
        record[encrypted: "address"] = .string("not json")
        let contact = try Contact(record: record)
        #expect(contact.emails.isEmpty)
        #expect(contact.address == PostalAddress())
        #expect(contact.phones == Self.contact.phones)
    }
}
