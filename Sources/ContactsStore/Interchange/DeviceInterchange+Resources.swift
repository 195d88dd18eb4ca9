import ContactsModel
import Foundation
import GRDB
import SyncCore
import SyncKit
import VCard

/// What a write of a resource requires of the one there (HTTP's `If-Match` and `If-None-Match`).
package enum ResourceCondition: Sendable, Hashable {
    /// Nothing: a new resource, or a new version of the one there.
    case none
    /// No resource of this name (`If-None-Match: *`).
    case absent
    /// A resource of this name, whichever version (`If-Match: *`).
    case present
    /// The resource at this change (`If-Match: "<etag>"`).
    case change(Int64)
}

/// Why a write of a resource was refused; nothing was changed.
package enum ResourceError: Error, Sendable, Hashable {
    /// The resource is not as the condition requires.
    case conditionFailed
    /// No resource of this name.
    case notFound
    /// The card's UID is another contact's: the one in `book` (named `name` there, or by its ID).
    case uidConflict(id: UUID, book: RecordZone.ID, name: String?)
    /// A group card written where a contact is, or a contact's card where a group card is.
    case kindConflict(group: Bool)
    /// A group card without a name.
    case unnamedGroup
}

/// The address book as resources, for the CardDAV bridge: a card written at a name is an edit like any
/// other (validated, saved with its outbox entry, sent, merged on the server's side by the three-way merge),
/// with the condition checked in the same transaction as the write. A write without a condition on the
/// version it replaces logs what it replaces as conflicts (``ContactMerge/overwritten(_:by:)``).
extension DeviceInterchange {
    /// Begins the change log (``ContactStore/startChangeLog()``) when it is not kept yet; returns its epoch.
    package func startChangeLog() throws -> String { try store.startChangeLog() }

    /// Reads the change log and the group cards (a front end's reads, beside ``reader``'s).
    package var changeLog: ChangeLogReader { ChangeLogReader(store) }

    /// Begins keeping group cards (``ContactStore/startGroupCards()``) when they are not kept yet.
    package func startGroupCards() throws { try store.startGroupCards() }

    /// Brings the book's group cards up to date with its members' groups (``ContactStore/refreshGroupCards(in:)``).
    package func refreshGroupCards(in book: RecordZone.ID) throws { try store.refreshGroupCards(in: book) }

    /// Writes `card` at `name` in `book`: a new contact, or a new version of the one there. The card's UID
    /// says which contact it is; a UID of another contact is refused (`uidConflict`). An inline `PHOTO`
    /// becomes the contact's photo; a card without one removes it.
    ///
    /// With `groupsAsCards` (a client that keeps groups as cards of their own, ``putGroupCard(_:named:in:condition:)``),
    /// the card's `CATEGORIES` are not its groups: the contact keeps the groups it has. Either way it joins the
    /// groups whose cards named it before it arrived.
    package func putResource(
        _ card: VCard, named name: String, in book: RecordZone.ID, condition: ResourceCondition,
        groupsAsCards: Bool = false
    ) throws -> (member: LoggedMember, created: Bool) {
        var card = card
        let image = ContactPhoto.takeInlineImage(from: &card)
        let hasUID = !(card.first("UID")?.text ?? "").isEmpty
        var read = Contact(vCard: card)
        try ContactValidation.validate(read)
        if let image { read.photo = try photos.keep(image.bytes, mediaType: image.mediaType) }
        let now = options.clock()
        let written = read
        return try write { transaction in
            var contact = written
            let db = transaction.db
            try DeviceContacts.checkWritable(book, db)
            let there = try ContactStore.member(named: name, in: book, db).flatMap { $0.present ? $0 : nil }
            try Self.check(condition, there)
            if let there {
                if hasUID && contact.id != there.id {
                    throw ResourceError.uidConflict(id: there.id, book: book, name: there.resourceName)
                }
                contact.id = there.id
            } else if let other = try ContactStore.book(of: contact.id, db) {
                let member = try ContactStore.member(contact.id, in: other, db)
                throw ResourceError.uidConflict(id: contact.id, book: other, name: member?.resourceName)
            }
            if try ContactStore.groupCard(contact.id, in: book, db) != nil {
                throw ResourceError.kindConflict(group: false)
            }
            let old = try ContactStore.contact(contact.id, db)
            if groupsAsCards { contact.groups = old?.groups ?? [] }
            contact.groups = try Self.groupsJoining(contact, contact.groups, in: book, db)
            if let old {
                // Emails and phones the card has as they were keep their items (and edit times), so that
                // the merge with another device's edit sees only what the client changed.
                contact.emails = Contact.items(contact.emails, keepingIDsOf: old.emails)
                contact.phones = Contact.items(contact.phones, keepingIDsOf: old.phones)
                contact = old.applying(changesFrom: old, to: contact)
                if let there, contact.sameContent(as: old) { return (there, false) }
            }
            let stamped = contact.stamped(against: old, at: try EditClock.stamp(now: now, db))
            if condition == .none, let old {
                try logOverwritten(old, by: stamped, in: book, at: now, transaction)
            }
            try ContactStore.put(stamped, in: book, db)
            try transaction.enqueue(.record(.saveRecord(stamped.recordID(in: book))))
            if name != stamped.id.canonicalString + ".vcf" {
                try ContactStore.nameResource(stamped.id, name, in: book, db)
            }
            guard let member = try ContactStore.member(stamped.id, in: book, db) else {
                throw ResourceError.notFound
            }
            return (member, there == nil)
        }
    }

    /// Deletes the contact at `name` in `book`, as ``delete(_:)`` does.
    package func deleteResource(named name: String, in book: RecordZone.ID, condition: ResourceCondition) throws {
        try write { transaction in
            let db = transaction.db
            guard let there = try ContactStore.member(named: name, in: book, db), there.present else {
                throw ResourceError.notFound
            }
            try Self.check(condition, there)
            try DeviceContacts.checkWritable(book, db)
            try ContactStore.removeContact(there.id, db)
            try transaction.enqueue(.record(.deleteRecord(Contact(id: there.id, name: "").recordID(in: book))))
        }
    }

    /// A write without `If-Match` replaces a version its client may never have seen: every value it
    /// replaces goes to the conflict log, the CardDAV client on this device named as the writer, so that
    /// an edit another device made since the client last read the card can be restored.
    private func logOverwritten(
        _ old: Contact, by new: Contact, in book: RecordZone.ID, at now: Date, _ transaction: ContactStore.Transaction
    ) throws {
        let losses = ContactMerge.overwritten(old, by: new)
        guard !losses.isEmpty else { return }
        let recordID = old.recordID(in: book)
        let sentHere = try transaction.pendingKind(of: recordID) == .save
        let previousDevice =
            sentHere ? name : try ContactStore.serverRecord(old.id, transaction.db).flatMap(Contact.device(of:)) ?? name
        for loss in losses {
            try transaction.logConflict(
                ContactConflict(
                    contactID: old.id, zoneID: book, contactName: new.name, field: loss.field,
                    kept: .init(
                        value: loss.kept.value, edited: loss.kept.edited, device: "a CardDAV client on \(name)"),
                    lost: .init(value: loss.lost.value, edited: loss.lost.edited, device: previousDevice), date: now))
        }
    }

    static func check(_ condition: ResourceCondition, _ there: LoggedMember?) throws {
        switch condition {
        case .none: return
        case .absent: if there != nil { throw ResourceError.conditionFailed }
        case .present: if there == nil { throw ResourceError.conditionFailed }
        case .change(let change): if there?.change != change { throw ResourceError.conditionFailed }
        }
    }
}
