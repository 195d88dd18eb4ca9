import ContactsModel
import Foundation
import SyncCore

/// How a contact is written as bytes: in a record between devices (format 3) and in the store's `json`
/// column (format 4 or 5, ``CompactContactForm``; the column's name stays from the first format).
///
/// Format 3, what records carry: a format byte, the UUID's 16 bytes, then each field in declaration order,
/// strings as a UInt32 byte count and UTF-8, lists as a UInt32 count and their items, dates as the bit
/// pattern of their `timeIntervalSinceReferenceDate` (exact), all integers little-endian. An upload or a
/// search reads every contact it touches, so reading has to be cheap: this takes a few microseconds where
/// JSON took fifty. The store keeps it compacted (format 4) and expands it to send it. Rows in earlier
/// formats are read as they were: format 3 (rows stored before format 4), format 2 (a format byte, then
/// JSON with dates as seconds since 2001) and the first format (JSON, dates in milliseconds, no format byte).
/// The birthday, the anniversary and the groups travel among the extras (see ``Contact/storedExtras``).
enum ContactFormat {
    static let binary: UInt8 = 3
    static let json: UInt8 = 2

    /// The contact as the store keeps it (format 4).
    static func stored(_ contact: Contact) -> Data {
        stored(wire: encode(contact))
    }

    /// `wire` (format 3, as a record brought it) as the store keeps it: compacted without being read.
    static func stored(wire: Data) -> Data {
        CompactContactForm.compact(wire) ?? wire
    }

    /// A stored row as a record carries it (format 3); rows stored in format 3 or earlier are returned as they are.
    static func wire(stored: Data) throws -> Data {
        CompactContactForm.isCompact(stored.first) ? try CompactContactForm.expand(stored) : stored
    }

    /// The contact as a record carries it (format 3).
    static func encode(_ contact: Contact) -> Data {
        var writer = StoredBytesWriter(capacity: 512)
        writer.byte(binary)
        writer.uuid(contact.id)
        writer.string(contact.name)
        writer.items(contact.emails)
        writer.items(contact.phones)
        writer.string(contact.organization)
        for part in addressParts(contact.address) { writer.string(part) }
        writer.string(contact.notes)
        let extras = contact.storedExtras
        writer.count(extras.count)
        for extra in extras { writer.string(extra) }
        let modified = contact.modified.sorted { $0.key.rawValue < $1.key.rawValue }
        writer.count(modified.count)
        for (field, date) in modified {
            writer.string(field.rawValue)
            writer.date(date)
        }
        return writer.data
    }

    /// Whether `data` is the contact `id` in the format records carry now, so that it can be sent as it is
    /// (after expanding): reading and writing it again gives the same contact (15 % of an upload's work).
    static func isCurrent(_ data: Data, id: UUID) -> Bool {
        guard data.count > 17, data.first == binary else { return false }
        return withUnsafeBytes(of: id.uuid) { idBytes in data.dropFirst().prefix(16).elementsEqual(idBytes) }
    }

    static func decode(_ data: Data) throws -> Contact {
        var contact = try decodeAsWritten(data)
        contact.takeStoredExtras()
        return contact
    }

    private static func decodeAsWritten(_ data: Data) throws -> Contact {
        switch data.first {
        case let form where CompactContactForm.isCompact(form):
            return try decodeAsWritten(CompactContactForm.expand(data))
        case binary:
            return try data.withUnsafeBytes { raw in
                var reader = StoredBytesReader(bytes: raw, offset: 1)
                return try reader.contact()
            }
        case json:
            return try JSONReader.decode(Contact.self, from: data.dropFirst())
        default:
            return try firstFormatDecoder.decode(Contact.self, from: data)
        }
    }

    private static func addressParts(_ address: PostalAddress) -> [String] {
        [address.street, address.city, address.region, address.postalCode, address.country]
    }

    /// Reads contacts stored in the first format (dates in milliseconds).
    private static let firstFormatDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }()
}

extension StoredBytesWriter {
    fileprivate mutating func items(_ items: [LabeledValue]) {
        count(items.count)
        for item in items {
            string(item.id)
            string(item.label)
            string(item.value)
            date(item.modified)
        }
    }
}

extension StoredBytesReader {
    fileprivate mutating func contact() throws -> Contact {
        var contact = Contact(id: try uuid(), name: try string())
        contact.emails = try items()
        contact.phones = try items()
        contact.organization = try string()
        contact.address = PostalAddress(
            street: try string(), city: try string(), region: try string(), postalCode: try string(),
            country: try string())
        contact.notes = try string()
        contact.extras = try (0..<count()).map { _ in try string() }
        var modified: [Contact.Field: Date] = [:]
        for _ in 0..<(try count()) {
            let name = try string()
            let date = try self.date()
            // A field a later version added is passed over rather than refused.
            if let field = Contact.Field(rawValue: name) { modified[field] = date }
        }
        contact.modified = modified
        guard isAtEnd else { throw damaged() }
        return contact
    }

    private mutating func items() throws -> [LabeledValue] {
        try (0..<count()).map { _ in
            var item = LabeledValue(id: try string(), label: try string(), value: try string())
            item.modified = try date()
            return item
        }
    }
}
