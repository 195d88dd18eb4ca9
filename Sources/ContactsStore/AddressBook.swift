import ContactsModel
import Foundation
import SyncCore

/// An address book: one zone. The person's own books are zones of their private database (the
/// default one is the zone ``Contact/zoneID``, which every earlier version used); books others share
/// with them are zones of their shared database, named with the owner's user record name.
///
/// A book's name travels in a record of its zone (``recordType``), so that renaming it reaches every
/// device and every participant; its share's record (which the server keeps in the zone) says who
/// shares it and what each participant may do.
public struct AddressBook: Sendable, Hashable, Identifiable {
    /// What this device's user may do with the book's contacts.
    public enum Access: String, Sendable, Hashable {
        /// One of the user's own books.
        case owner
        /// Shared with the user, who may change its contacts.
        case readWrite
        /// Shared with the user, who may only read it.
        case readOnly
    }

    /// The record type that names a book.
    public static let recordType = "AddressBook"
    /// The encrypted field that holds a book's name.
    static let nameField = "name"
    /// The name of the book that every account has, which earlier versions called nothing at all.
    public static let defaultName = "Contacts"

    public var zoneID: RecordZone.ID
    public var name: String
    public var access: Access
    /// The account name of the book's owner, for a shared book (nil for one's own, or before the
    /// share's record arrived).
    public var ownerUsername: String?
    /// The people the book is shared with (the owner first), as its share's record lists them; empty
    /// for a book that is not shared.
    public var participants: [ShareParticipant]

    public init(
        zoneID: RecordZone.ID, name: String, access: Access, ownerUsername: String? = nil,
        participants: [ShareParticipant] = []
    ) {
        self.zoneID = zoneID
        self.name = name
        self.access = access
        self.ownerUsername = ownerUsername
        self.participants = participants
    }

    public var id: RecordZone.ID { zoneID }
    /// The book every account has; it can be neither deleted nor shared.
    public var isDefault: Bool { zoneID == Contact.zoneID }
    public var isOwn: Bool { access == .owner }
    public var canEdit: Bool { access != .readOnly }

    /// The people who have the book besides its owner (those removed aside).
    public var sharedWith: [ShareParticipant] { Self.sharedWith(participants) }

    /// The participants of a share who are not its owner and were not removed.
    static func sharedWith(_ participants: [ShareParticipant]) -> [ShareParticipant] {
        participants.filter { $0.role != .owner && $0.acceptanceStatus != .removed }
    }

    /// Whether two book or account names are the same, letter case aside (as people type them).
    static func sameName(_ a: String, _ b: String) -> Bool { a.compare(b, options: .caseInsensitive) == .orderedSame }

    /// The record that names the book in its zone. Named after the zone, so that no two books on a
    /// device have records of the same name (zone names of new books are random).
    public var recordID: RecordValue.ID { RecordValue.ID(recordName: "book." + zoneID.zoneName, zoneID: zoneID) }

    /// Whether `recordID` names a book rather than a contact.
    static func isBookRecord(_ recordID: RecordValue.ID) -> Bool { recordID.recordName.hasPrefix("book.") }

    /// A book this device has not heard of yet (its record comes later in the same fetch): one of the
    /// account's own in the private database, read-only until its share says otherwise in the shared one.
    static func unknown(_ zoneID: RecordZone.ID) -> AddressBook {
        let own = zoneID.ownerName == RecordZone.ID.defaultOwnerName
        return AddressBook(zoneID: zoneID, name: zoneID.zoneName, access: own ? .owner : .readOnly)
    }

    /// A new book of one's own, in a zone of its own.
    static func new(named name: String) -> AddressBook {
        AddressBook(
            zoneID: RecordZone.ID(zoneName: "book-" + UUID.random().uuidString.lowercased()), name: name,
            access: .owner)
    }

    /// A record to save: `base` (the last known server record) with this book's name, sealed.
    func record(base: RecordValue?) -> RecordValue {
        var record = base ?? RecordValue(recordType: Self.recordType, recordID: recordID)
        record[encrypted: Self.nameField] = .string(name)
        return record
    }

    /// The name a book record holds; nil for a record that is not a book's.
    static func name(in record: RecordValue) -> String? {
        guard record.recordType == recordType else { return nil }
        return record[encrypted: nameField]?.stringValue ?? record[nameField]?.stringValue
    }

}

/// A book name as a person typed it: trimmed, 1 to 100 characters, no control characters.
enum BookName {
    static func validated(_ text: String) throws -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 100,
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw DeviceError.invalidBookName
        }
        return name
    }
}
