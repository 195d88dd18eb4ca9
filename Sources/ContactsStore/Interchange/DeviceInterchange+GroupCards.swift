import ContactsModel
import Foundation
import GRDB
import SyncCore
import SyncKit
import VCard

/// A client's group cards (``ContactsModel/ContactGroupCard``) as edits of the members' groups: a card
/// written puts its members in the group and takes others out of it, under its name (a new name renames
/// the group on every member); a card deleted takes everyone out. Members the card names that the book
/// does not have yet join when they arrive. Each write is one transaction with the members' outbox entries,
/// like any edit, and syncs as edits of the members.
extension DeviceInterchange {
    /// Writes the group card `card` at `name` in `book`.
    package func putGroupCard(
        _ card: ContactGroupCard, named name: String, in book: RecordZone.ID, condition: ResourceCondition
    ) throws -> (member: LoggedMember, created: Bool) {
        guard !card.name.isEmpty else { throw ResourceError.unnamedGroup }
        let now = options.clock()
        return try write { transaction in
            let db = transaction.db
            try DeviceContacts.checkWritable(book, db)
            try ContactStore.refreshGroupCards(in: book, db)
            let there = try ContactStore.member(named: name, in: book, db).flatMap { $0.present ? $0 : nil }
            try Self.check(condition, there)
            let stored = try there.flatMap { try ContactStore.groupCard($0.id, in: book, db) }
            if let there, stored == nil {
                // A contact is there: one an earlier version kept of this very group card gives way to the
                // group; any other stays, and the card is refused.
                guard let contact = try ContactStore.contact(there.id, db),
                    ContactGroupCard.isGroup(contact.vCard(version: .v4))
                else { throw ResourceError.kindConflict(group: true) }
                try ContactStore.removeContact(there.id, db)
                try transaction.enqueue(.record(.deleteRecord(contact.recordID(in: book))))
            }
            let key = Contact.sortKey(card.name)
            let renamed = stored.map { $0.key != key } ?? false
            // Who the card names, among the book's contacts; the others wait for theirs.
            var members: Set<UUID> = []
            var pending: [String] = []
            for uid in card.members {
                let found = try ContactGroupCard.contactIDs(ofMember: uid).first { id in
                    try ContactStore.book(of: id, db) == book
                }
                if let found { members.insert(found) } else { pending.append(uid) }
            }
            let stamp = try EditClock.stamp(now: now, db)
            for contact in try Self.contacts(in: book, db) {
                var groups = contact.groups
                if renamed, let old = stored?.key { groups.removeAll { Contact.sortKey($0) == old } }
                let wasIn = groups.contains { Contact.sortKey($0) == key }
                if members.contains(contact.id) {
                    if !wasIn { groups.append(card.name) }
                } else if wasIn {
                    groups.removeAll { Contact.sortKey($0) == key }
                }
                try Self.saveGroups(groups, of: contact, at: stamp, in: book, transaction)
            }
            let id = stored?.id ?? .random()
            try ContactStore.putGroupCard(
                StoredGroupCard(
                    id: id, key: key,
                    card: ContactGroupCard(
                        name: card.name, uid: card.uid.isEmpty ? id.canonicalString : card.uid, members: []),
                    pending: pending, present: true, written: true),
                in: book, db)
            try ContactStore.logGroupCardChange(id, in: book, present: true, db)
            if name != id.canonicalString + ".vcf" { try ContactStore.nameResource(id, name, in: book, db) }
            try ContactStore.refreshGroupCards(in: book, db)
            guard let member = try ContactStore.member(id, in: book, db) else { throw ResourceError.notFound }
            return (member, there == nil)
        }
    }

    /// Deletes the group card at `name` in `book`: nobody is in its group any more. False when no group card
    /// is there (a contact may be).
    package func deleteGroupCard(named name: String, in book: RecordZone.ID, condition: ResourceCondition) throws
        -> Bool
    {
        let now = options.clock()
        return try write { transaction in
            let db = transaction.db
            guard let there = try ContactStore.member(named: name, in: book, db), there.present,
                var stored = try ContactStore.groupCard(there.id, in: book, db)
            else { return false }
            try Self.check(condition, there)
            try DeviceContacts.checkWritable(book, db)
            let stamp = try EditClock.stamp(now: now, db)
            for contact in try Self.contacts(in: book, db) {
                let groups = contact.groups.filter { Contact.sortKey($0) != stored.key }
                try Self.saveGroups(groups, of: contact, at: stamp, in: book, transaction)
            }
            stored.present = false
            stored.written = false
            stored.pending = []
            try ContactStore.putGroupCard(stored, in: book, db)
            try ContactStore.logGroupCardChange(stored.id, in: book, present: false, db)
            try ContactStore.refreshGroupCards(in: book, db)
            return true
        }
    }

    /// The groups a contact written by a client of group cards has: those it had, and those whose cards
    /// named it before it was there (which then stop waiting for it).
    static func groupsJoining(_ contact: Contact, _ groups: [String], in book: RecordZone.ID, _ db: GRDB.Database)
        throws -> [String]
    {
        var groups = groups
        for var card in try ContactStore.groupCards(in: book, db) where card.present {
            let waiting = card.pending.filter { ContactGroupCard.contactIDs(ofMember: $0).contains(contact.id) }
            guard !waiting.isEmpty else { continue }
            if !groups.contains(where: { Contact.sortKey($0) == card.key }) { groups.append(card.card.name) }
            card.pending.removeAll { waiting.contains($0) }
            try ContactStore.putGroupCard(card, in: book, db)
        }
        return Contact.groupList(groups)
    }

    /// The book's contacts, read whole before any is written.
    private static func contacts(in book: RecordZone.ID, _ db: GRDB.Database) throws -> [Contact] {
        var contacts: [Contact] = []
        try ContactStore.forEachContact(in: book, db) { contact in
            contacts.append(contact)
            return true
        }
        return contacts
    }

    /// Saves `contact` with `groups`, as an edit, when they are not the groups it has.
    private static func saveGroups(
        _ groups: [String], of contact: Contact, at stamp: Date, in book: RecordZone.ID,
        _ transaction: ContactStore.Transaction
    ) throws {
        var edited = contact
        edited.groups = Contact.groupList(groups)
        guard edited.groups != contact.groups else { return }
        // A group's name from a client is checked as one typed in the app (no control characters…).
        try ContactValidation.validate(edited)
        try DeviceContacts.save(edited.stamped(against: contact, at: stamp), in: book, transaction)
    }
}
