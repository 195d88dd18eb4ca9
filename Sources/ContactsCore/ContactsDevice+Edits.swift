import Foundation
import SyncCore
import SyncKit

/// A person's edits: each saved and queued for upload in one transaction.
extension ContactsDevice {
    /// Saves a new contact locally and queues it for upload. Throws on invalid input, changing nothing.
    @discardableResult
    public func add(_ contact: Contact, at date: Date = Date()) throws -> Contact {
        let contact = contact.stamped(against: nil, at: date)
        try ContactValidation.validate(contact)
        try save(contact)
        return contact
    }

    /// Saves an edited contact; fields that differ from the stored one get a new edit time.
    @discardableResult
    public func update(_ contact: Contact, at date: Date = Date()) throws -> Contact {
        guard let old = try store.contact(contact.id) else { throw ContactError.unknownID(contact.id.uuidString) }
        let contact = contact.stamped(against: old, at: date)
        try ContactValidation.validate(contact)
        if contact == old { return old }
        try save(contact)
        return contact
    }

    /// Deletes a contact here and queues the deletion. Throws for an unknown ID, changing nothing.
    public func delete(_ id: UUID) throws {
        try write { transaction in
            guard try ContactStore.contact(id, transaction.db) != nil else {
                throw ContactError.unknownID(id.uuidString)
            }
            try ContactStore.removeContact(id, transaction.db)
            try transaction.enqueue(.record(.deleteRecord(Contact(id: id, name: "").recordID)))
        }
    }

    private func save(_ contact: Contact) throws {
        try write { transaction in
            try ContactStore.put(contact, transaction.db)
            try transaction.enqueue(.record(.saveRecord(contact.recordID)))
        }
    }
}
