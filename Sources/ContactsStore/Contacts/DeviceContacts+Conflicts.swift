import ContactsModel
import Foundation
import GRDB
import SyncCore

/// The conflict log's actions: putting a lost value back, or dismissing the entry. Either takes the
/// entry out of the log on every device.
extension DeviceContacts {
    /// Puts the value an entry lost back into its contact, as a new edit that syncs like any other, and
    /// takes the entry out of the log. Throws, changing nothing, when the entry or the contact is gone,
    /// or the book is one this account may only read.
    @discardableResult
    public func restoreConflict(_ id: UUID, at date: Date? = nil) throws -> Contact {
        let now = date ?? options.clock()
        return try write { transaction in
            let db = transaction.db
            let entry = try Self.loggedConflict(id, db)
            try Self.checkWritable(entry.zoneID, db)
            guard let contact = try ContactStore.contact(entry.contactID, db) else {
                throw DeviceError.conflictContactDeleted(
                    contact: entry.contactName, field: entry.fieldName, entry: entry.shortID)
            }
            let restored = entry.restoring(on: contact)
            try ContactValidation.validate(restored)
            try transaction.removeConflict(entry)
            // Restored by hand already: only the entry goes.
            if restored.sameContent(as: contact) { return contact }
            let stamped = restored.stamped(against: contact, at: try EditClock.stamp(now: now, db))
            try Self.save(stamped, in: nil, transaction)
            return stamped
        }
    }

    /// Takes an entry out of the log, leaving the contact as it is.
    public func dismissConflict(_ id: UUID) throws {
        try write { transaction in
            let entry = try Self.loggedConflict(id, transaction.db)
            try Self.checkWritable(entry.zoneID, transaction.db)
            try transaction.removeConflict(entry)
        }
    }

    private static func loggedConflict(_ id: UUID, _ db: GRDB.Database) throws -> ContactConflict {
        guard let entry = try ContactStore.conflict(id, db) else {
            throw DeviceError.conflictGone
        }
        return entry
    }
}
