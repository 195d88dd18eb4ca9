import ContactsModel
import Foundation
import GRDB
import SyncCore
import SyncKit

/// A person's edits: each saved and queued for upload in one transaction.
extension DeviceContacts {
    /// Saves a new contact locally, in `book` (the default one when nil), and queues it for upload.
    /// Throws on invalid input, or a book this account may only read, changing nothing. Edit times come
    /// from ``EditClock``, `date` (this device's clock when nil) being what the device's clock says.
    @discardableResult
    public func add(_ contact: Contact, to book: RecordZone.ID? = nil, at date: Date? = nil) throws -> Contact {
        try ContactValidation.validate(contact)
        let now = date ?? options.clock()
        return try write { transaction in
            let contact = contact.stamped(against: nil, at: try EditClock.stamp(now: now, transaction.db))
            try Self.save(contact, in: book ?? Contact.zoneID, transaction)
            return contact
        }
    }

    /// Saves an edited contact; fields that differ from the stored one get a new edit time.
    @discardableResult
    public func update(_ contact: Contact, at date: Date? = nil) throws -> Contact {
        try ContactValidation.validate(contact)
        let now = date ?? options.clock()
        return try write { transaction in
            guard let old = try ContactStore.contact(contact.id, transaction.db) else {
                throw ContactError.unknownID(contact.id.uuidString)
            }
            if contact.sameContent(as: old) { return old }
            let stamped = contact.stamped(against: old, at: try EditClock.stamp(now: now, transaction.db))
            try Self.save(stamped, in: nil, transaction)
            return stamped
        }
    }

    /// Deletes a contact here and queues the deletion. Throws for an unknown ID, changing nothing.
    public func delete(_ id: UUID) throws {
        try write { transaction in
            guard let zoneID = try ContactStore.book(of: id, transaction.db) else {
                throw ContactError.unknownID(id.uuidString)
            }
            try Self.checkWritable(zoneID, transaction.db)
            try Self.remove(id, in: zoneID, transaction)
        }
    }

    /// Merges likely duplicates into the first of `ids` (``Contact/combined(with:)``) and deletes the others,
    /// in one transaction: synced as an edit and deletions. They must be in one book this account may
    /// change; throws otherwise, changing nothing.
    @discardableResult
    public func merge(_ ids: [UUID], at date: Date? = nil) throws -> Contact {
        guard Set(ids).count == ids.count, ids.count >= 2 else {
            throw DeviceError.mergeNeedsTwo
        }
        let now = date ?? options.clock()
        return try write { transaction in
            var contacts: [Contact] = []
            var book: RecordZone.ID?
            for id in ids {
                guard let contact = try ContactStore.contact(id, transaction.db),
                    let zoneID = try ContactStore.book(of: id, transaction.db)
                else { throw ContactError.unknownID(id.uuidString) }
                if let book, book != zoneID {
                    throw DeviceError.mergeAcrossBooks(contact.name, contacts[0].name)
                }
                book = zoneID
                contacts.append(contact)
            }
            let time = try EditClock.stamp(now: now, transaction.db)
            let merged = contacts[0].combined(with: Array(contacts.dropFirst())).stamped(against: contacts[0], at: time)
            try ContactValidation.validate(merged)
            // Into the book they are in, if this account may change it.
            try Self.save(merged, in: nil, transaction)
            for other in contacts.dropFirst() { try Self.remove(other.id, in: book!, transaction) }
            return merged
        }
    }

    private static func remove(_ id: UUID, in zoneID: RecordZone.ID, _ transaction: ContactStore.Transaction) throws {
        try ContactStore.removeContact(id, transaction.db)
        try transaction.enqueue(.record(.deleteRecord(Contact(id: id, name: "").recordID(in: zoneID))))
    }

    /// Saves `contact` into the book it is in, or into `book` when it is new.
    static func save(_ contact: Contact, in book: RecordZone.ID?, _ transaction: ContactStore.Transaction)
        throws
    {
        let zoneID = try ContactStore.book(of: contact.id, transaction.db) ?? book ?? Contact.zoneID
        try checkWritable(zoneID, transaction.db)
        try ContactStore.put(contact, in: zoneID, transaction.db)
        try transaction.enqueue(.record(.saveRecord(contact.recordID(in: zoneID))))
    }

    /// Refuses a change to a book this account may only read (the server would refuse it), or one
    /// this device does not have.
    static func checkWritable(_ zoneID: RecordZone.ID, _ db: GRDB.Database) throws {
        guard let book = try ContactStore.book(zoneID, db) else {
            throw DeviceError.noSuchBookOnDevice
        }
        guard book.canEdit else { throw ContactError.readOnlyBook(book.name, owner: book.ownerUsername) }
    }
}
