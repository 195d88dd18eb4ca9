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
/// Format 5 is format 4 for a contact as it was made or imported: its edit-time map names every field
/// ``fieldNames`` lists, in that order, all at one instant, and is written as that instant alone.
///
/// Format 3 at 690 bytes a contact (the benchmark's cards) is about 340 in format 4, 280 in format 5 (with
/// item IDs made from the contact's).
enum CompactContactForm {
    static let format: UInt8 = 4
    /// Format 4 with the edit-time map of a contact made at one instant written as the instant.
    static let formatMadeAtOnce: UInt8 = 5

    /// Whether a stored row that begins with `first` is in format 4 or 5.
    static func isCompact(_ first: UInt8?) -> Bool { first == format || first == formatMadeAtOnce }

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

    /// `wire` (format 3) in format 4, or 5 when it can; nil when `wire` is not a whole format-3 contact.
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
                        // Only the canonical text (upper case), so that ``expand(_:)`` writes the same bytes back.
                        let uuid = UUID(canonicalText: id)
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
                if let instant = oneInstant(&reader, edits: edits) {
                    // Known only now: the row is format 5.
                    writer.bytes[0] = formatMadeAtOnce
                    dates.write(instant, to: &writer)
                } else {
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
                }
                guard reader.isAtEnd else { return nil }
            } catch {
                return nil
            }
            return writer.data
        }
    }

    /// `stored` (format 4 or 5) as the format-3 bytes it was made from; throws ``ContactsModel/ContactError/damagedRow(offset:)``
    /// for anything else.
    static func expand(_ stored: Data) throws -> Data {
        try stored.withUnsafeBytes { raw in
            var reader = StoredBytesReader(bytes: raw, offset: 0)
            let form = try reader.byte()
            guard isCompact(form) else { throw reader.damaged() }
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
            if form == formatMadeAtOnce {
                writer.count(fieldNames.count)
                let instant = try dates.read(&reader)
                for name in fieldNames {
                    writer.byteString(name)
                    withUnsafeBytes(of: instant) { writer.bytes.append(contentsOf: $0) }
                }
            } else {
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
            }
            guard reader.isAtEnd else { throw reader.damaged() }
            return writer.data
        }
    }

    /// The one instant of an edit-time map of `edits` entries that names every field of ``fieldNames`` in
    /// order, all at that instant, read past; nil (with `reader` where it was) for any other map.
    private static func oneInstant(_ reader: inout StoredBytesReader, edits: Int) -> UnsafeRawBufferPointer? {
        guard edits == fieldNames.count else { return nil }
        let start = reader.offset
        var instant: UnsafeRawBufferPointer?
        let same =
            (try? fieldNames.allSatisfy { name in
                guard try reader.slice().elementsEqual(name) else { return false }
                let date = try reader.fixed(8)
                defer { instant = instant ?? date }
                return instant.map { $0.elementsEqual(date) } ?? true
            }) ?? false
        if same, let instant { return instant }
        reader.offset = start
        return nil
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
            let bits = try read(&reader)
            withUnsafeBytes(of: bits) { writer.bytes.append(contentsOf: $0) }
        }

        /// The date a reference names, as the bits of its 8 bytes.
        mutating func read(_ reader: inout StoredBytesReader) throws -> UInt64 {
            let reference = try reader.varint()
            guard reference > 0 else {
                let bits = try reader.fixed(8).loadUnaligned(as: UInt64.self)
                if dates.count < remembered { dates.append(bits) }
                return bits
            }
            guard reference <= dates.count else { throw reader.damaged() }
            return dates[reference - 1]
        }
    }
}
