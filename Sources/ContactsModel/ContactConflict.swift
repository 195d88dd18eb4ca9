import Foundation
import SyncCore

/// A value a merge dropped: two devices changed one field of a contact (or one of its emails or phones)
/// at once, and the later edit was kept (``ContactMerge``). Both sides are kept here, with their devices
/// and edit times, so that nothing a person typed is lost without a trace: the losing value can be put
/// back as a new edit (``restoring(on:)``), or the entry dismissed.
///
/// Entries travel as records of the contact's book (``recordType``), so every device of the account,
/// and everyone the book is shared with, sees the same log; restoring or dismissing one deletes its
/// record everywhere.
public struct ContactConflict: Sendable, Hashable, Codable, Identifiable {
    /// A field's value as the log keeps it, in a form it can be put back from.
    public enum Value: Sendable, Hashable, Codable {
        case text(String)
        case address(PostalAddress)
        case date(ContactDate?)
        /// Unmodelled vCard properties, one content line each; or the groups, one name each.
        case lines([String])
        /// One email or phone, with its ID.
        case item(LabeledValue)

        /// The value as a person reads it; empty for an empty value.
        public var text: String {
            switch self {
            case .text(let text): text
            case .address(let address): address.singleLine
            case .date(let date): date?.description ?? ""
            case .lines(let lines): lines.joined(separator: "; ")
            case .item(let item): item.labeledText
            }
        }
    }

    /// One side of the conflict.
    public struct Side: Sendable, Hashable, Codable {
        public var value: Value
        /// When the value was edited (by its device's ``EditClock``).
        public var edited: Date
        /// The device that had the value: the one that merged, or the one that saved the server's version.
        public var device: String

        public init(value: Value, edited: Date, device: String) {
            self.value = value
            self.edited = edited
            self.device = device
        }
    }

    public var id: UUID
    public var contactID: UUID
    /// The book the contact is in.
    public var zoneID: RecordZone.ID
    /// The contact's name after the merge, to list the entry by.
    public var contactName: String
    public var field: Contact.Field
    public var kept: Side
    public var lost: Side
    /// When the merge happened.
    public var date: Date

    public init(
        id: UUID = .random(), contactID: UUID, zoneID: RecordZone.ID, contactName: String, field: Contact.Field,
        kept: Side, lost: Side, date: Date
    ) {
        self.id = id
        self.contactID = contactID
        self.zoneID = zoneID
        self.contactName = contactName
        self.field = field
        self.kept = kept
        self.lost = lost
        self.date = date
    }

    /// What the field is called where a person reads the entry ("name", "email", "birthday" …).
    public var fieldName: String {
        switch field {
        case .emails: "email"
        case .phones: "phone"
        case .organization: "organisation"
        case .extras: "other vCard properties"
        default: field.rawValue
        }
    }

    /// `contact` with the lost value put back: a field takes it whole; an email or phone replaces the
    /// item it was (or is added again, if that item has gone since). Edit times are left for the save
    /// to stamp.
    public func restoring(on contact: Contact) -> Contact {
        var contact = contact
        switch (field, lost.value) {
        case (.name, .text(let text)): contact.name = text
        case (.organization, .text(let text)): contact.organization = text
        case (.notes, .text(let text)): contact.notes = text
        case (.address, .address(let address)): contact.address = address
        case (.birthday, .date(let date)): contact.birthday = date
        case (.anniversary, .date(let date)): contact.anniversary = date
        case (.extras, .lines(let lines)): contact.extras = lines
        case (.groups, .lines(let names)): contact.groups = Contact.groupList(names)
        case (.emails, .item(let item)): contact.emails = Self.putting(item, in: contact.emails)
        case (.phones, .item(let item)): contact.phones = Self.putting(item, in: contact.phones)
        default: break
        }
        return contact
    }

    private static func putting(_ item: LabeledValue, in items: [LabeledValue]) -> [LabeledValue] {
        guard let index = items.firstIndex(where: { $0.id == item.id }) else { return items + [item] }
        var items = items
        items[index].label = item.label
        items[index].value = item.value
        return items
    }
}

// MARK: Records

extension ContactConflict {
    /// The record type of a log entry, in the zone of the contact's book.
    public static let recordType = "ContactConflict"
    /// The encrypted field that holds the entry.
    static let entryField = "entry"
    private static let recordNamePrefix = "conflict."

    public var recordID: RecordValue.ID {
        RecordValue.ID(recordName: Self.recordNamePrefix + id.uuidString, zoneID: zoneID)
    }

    package static func isConflictRecord(_ recordID: RecordValue.ID) -> Bool {
        recordID.recordName.hasPrefix(recordNamePrefix)
    }

    /// The entry's ID from its record's name.
    package static func id(of recordID: RecordValue.ID) -> UUID? {
        guard isConflictRecord(recordID) else { return nil }
        return UUID(uuidString: String(recordID.recordName.dropFirst(recordNamePrefix.count)))
    }

    package var record: RecordValue {
        var record = RecordValue(recordType: Self.recordType, recordID: recordID)
        record[encrypted: Self.entryField] = .bytes(Self.encoded(self))
        return record
    }

    /// The entry a record holds (in the record's zone); nil for a record that holds none.
    package init?(record: RecordValue) {
        guard record.recordType == Self.recordType, let id = Self.id(of: record.recordID),
            let data = record[encrypted: Self.entryField]?.bytesValue,
            var entry = Self.decoded(data)
        else { return nil }
        entry.id = id
        entry.zoneID = record.recordID.zoneID
        self = entry
    }

    package static func encoded(_ entry: ContactConflict) -> Data {
        (try? JSONEncoder().encode(entry)) ?? Data()
    }

    package static func decoded(_ data: Data) -> ContactConflict? {
        try? JSONDecoder().decode(ContactConflict.self, from: data)
    }
}

extension ContactConflict {
    /// The start of the ID, as `contacts conflicts` prints it and takes it back.
    public var shortID: String { String(id.uuidString.prefix(8)) }
}
