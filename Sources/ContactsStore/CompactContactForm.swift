import ContactsModel
import Foundation

/// Format 4, the form the store keeps a contact's row in: format 3 (``ContactFormat``, what a record carries
/// between devices) with its repetition taken out, so that a million contacts take 350 MB less.
///
/// It says exactly what format 3 says, item for item, and turns back into the same bytes (``expand(_:)``),
/// so a contact goes out in format 3 as before and devices of earlier versions read it. What changes:
/// - byte counts and list counts are LEB128 varints, not 4 bytes (one byte for anything under 128);
/// - an item ID made from the contact's own (``ContactsModel/Contact/itemID(of:list:index:)``, what items of
///   contacts made by this version get) is a 2 byte and its index; another that is a UUID's canonical text
///   (36 uppercase characters) is its 16 bytes, after a 0 byte; any other ID is a 1 byte and the string;
/// - an edit-time field name is one byte, its place in ``fieldNames`` (a later field: 0xFF and the name);
/// - a date is a reference: 0 and its 8 bytes the first time it appears, or its place among the first
///   ``remembered`` dates already written, plus one (a contact's edit times are mostly one instant).
///
/// Format 3 at 690 bytes a contact (the benchmark's cards) is about 340 in this form.
enum CompactContactForm {
    static let format: UInt8 = 4

    /// The edit-time map's field names, by code. Fixed: a field added later is written by name.
    static let fieldNames: [[UInt8]] = [
        "address", "anniversary", "birthday", "emails", "extras", "groups", "name", "notes", "organization",
        "phones", "photo",
    ].map { Array($0.utf8) }

    static let fieldByName: UInt8 = 0xFF
    static let uuidItemID: UInt8 = 0
    static let stringItemID: UInt8 = 1
    static let ownItemID: UInt8 = 2

    /// How many distinct dates a contact's references can name; later ones are written whole each time.
    static let remembered = 32

    /// `wire` (format 3) in format 4; nil when `wire` is not a whole format-3 contact.
    static func compact(_ wire: Data) -> Data? {
        guard wire.first == ContactFormat.binary else { return nil }
        return wire.withUnsafeBytes { raw -> Data? in
            var reader = StoredBytesReader(bytes: raw, offset: 1)
            var writer = StoredBytesWriter(capacity: raw.count)
            var dates = DateTable()
            do {
                writer.byte(format)
                let contact = try reader.uuid()
                writer.uuid(contact)
                writer.varintString(try reader.slice())
                for list in Contact.ItemList.allCases {
                    let count = try reader.count()
                    writer.varint(count)
                    for _ in 0..<count {
                        let id = try reader.slice()
                        let uuid = canonicalUUID(id)
                        if let uuid, let index = Contact.itemIndex(of: uuid, in: contact, list: list) {
                            writer.byte(ownItemID)
                            writer.byte(index)
                        } else if let uuid {
                            writer.byte(uuidItemID)
                            writer.uuid(uuid)
                        } else {
                            writer.byte(stringItemID)
                            writer.varintString(id)
                        }
                        writer.varintString(try reader.slice())
                        writer.varintString(try reader.slice())
                        dates.write(try reader.fixed(8), to: &writer)
                    }
                }
                // The organization, the address's five parts and the notes.
                for _ in 0..<7 { writer.varintString(try reader.slice()) }
                let extras = try reader.count()
                writer.varint(extras)
                for _ in 0..<extras { writer.varintString(try reader.slice()) }
                let edits = try reader.count()
                writer.varint(edits)
                for _ in 0..<edits {
                    let name = try reader.slice()
                    if let code = fieldNames.firstIndex(where: { $0.elementsEqual(name) }) {
                        writer.byte(UInt8(code))
                    } else {
                        writer.byte(fieldByName)
                        writer.varintString(name)
                    }
                    dates.write(try reader.fixed(8), to: &writer)
                }
                guard reader.isAtEnd else { return nil }
            } catch {
                return nil
            }
            return writer.data
        }
    }

    /// `stored` (format 4) as the format-3 bytes it was made from; throws ``ContactsModel/ContactError/damagedRow(offset:)``
    /// for anything else.
    static func expand(_ stored: Data) throws -> Data {
        try stored.withUnsafeBytes { raw in
            var reader = StoredBytesReader(bytes: raw, offset: 0)
            guard try reader.byte() == format else { throw reader.damaged() }
            var writer = StoredBytesWriter(capacity: raw.count * 2)
            var dates = DateTable()
            writer.byte(ContactFormat.binary)
            let contact = try reader.uuid()
            writer.uuid(contact)
            writer.byteString(try reader.varintSlice())
            for list in Contact.ItemList.allCases {
                let count = try reader.varint()
                writer.count(count)
                for _ in 0..<count {
                    switch try reader.byte() {
                    case ownItemID:
                        writer.string(Contact.itemID(of: contact, list: list, index: try reader.byte()).canonicalString)
                    case uuidItemID: writer.string(try reader.uuid().canonicalString)
                    case stringItemID: writer.byteString(try reader.varintSlice())
                    default: throw reader.damaged()
                    }
                    writer.byteString(try reader.varintSlice())
                    writer.byteString(try reader.varintSlice())
                    try dates.read(&reader, to: &writer)
                }
            }
            for _ in 0..<7 { writer.byteString(try reader.varintSlice()) }
            let extras = try reader.varint()
            writer.count(extras)
            for _ in 0..<extras { writer.byteString(try reader.varintSlice()) }
            let edits = try reader.varint()
            writer.count(edits)
            for _ in 0..<edits {
                let code = try reader.byte()
                if code == fieldByName {
                    writer.byteString(try reader.varintSlice())
                } else {
                    guard Int(code) < fieldNames.count else { throw reader.damaged() }
                    writer.byteString(fieldNames[Int(code)])
                }
                try dates.read(&reader, to: &writer)
            }
            guard reader.isAtEnd else { throw reader.damaged() }
            return writer.data
        }
    }

    /// The UUID `text` names when `text` is exactly its canonical text (upper case, as `UUID.uuidString`
    /// writes it), so that ``expand(_:)`` writes the same bytes back.
    private static func canonicalUUID(_ text: UnsafeRawBufferPointer) -> UUID? {
        guard text.count == 36, let uuid = UUID(canonical: String(decoding: text, as: UTF8.self)),
            uuid.canonicalString.utf8.elementsEqual(text)
        else { return nil }
        return uuid
    }

    /// The dates a contact's references name, in the order they were first written.
    private struct DateTable {
        var dates: [UInt64] = []

        mutating func write(_ date: UnsafeRawBufferPointer, to writer: inout StoredBytesWriter) {
            let bits = date.loadUnaligned(as: UInt64.self)
            if let index = dates.firstIndex(of: bits) {
                writer.varint(index + 1)
                return
            }
            writer.byte(0)
            writer.bytes.append(contentsOf: date)
            if dates.count < remembered { dates.append(bits) }
        }

        mutating func read(_ reader: inout StoredBytesReader, to writer: inout StoredBytesWriter) throws {
            let reference = try reader.varint()
            guard reference > 0 else {
                let date = try reader.fixed(8)
                if dates.count < remembered { dates.append(date.loadUnaligned(as: UInt64.self)) }
                return writer.bytes.append(contentsOf: date)
            }
            guard reference <= dates.count else { throw reader.damaged() }
            withUnsafeBytes(of: dates[reference - 1]) { writer.bytes.append(contentsOf: $0) }
        }
    }
}
