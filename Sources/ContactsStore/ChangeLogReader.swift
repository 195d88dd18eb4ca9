import ContactsModel
import Foundation
import SyncCore

/// What a front end that serves books as collections reads from a device (the CardDAV bridge): each
/// book's members by resource name, what changed after a change number, the group cards made from the
/// members' groups, and the contacts themselves. Each call reads in a transaction of its own; nothing
/// here writes (the bridge writes through ``ContactsDevice``, which syncs what it writes).
package struct ChangeLogReader: Sendable {
    let store: ContactStore

    init(_ store: ContactStore) {
        self.store = store
    }

    /// The book's newest change number (0 before any).
    package func latestChange(in book: RecordZone.ID) throws -> Int64 { try store.latestChange(in: book) }
    /// The book's member under a resource name, present or removed; nil for a name never given.
    package func member(named name: String, in book: RecordZone.ID) throws -> LoggedMember? {
        try store.member(named: name, in: book)
    }
    /// ``member(named:in:)`` of each name, in one read.
    package func members(named names: [String], in book: RecordZone.ID) throws -> [LoggedMember?] {
        try store.members(named: names, in: book)
    }
    /// The book's present members in list order (the first `limit` when given).
    package func members(of book: RecordZone.ID, limit: Int? = nil) throws -> [LoggedMember] {
        try store.members(of: book, limit: limit)
    }
    /// The present members of those `ids`, in their order (nil for one not in the book).
    package func members(_ ids: [UUID], in book: RecordZone.ID) throws -> [LoggedMember?] {
        try store.members(ids, in: book)
    }
    /// Hands `body` the book's present members a page at a time, in list order.
    package func forEachPageOfMembers(
        of book: RecordZone.ID, pageSize: Int, _ body: ([LoggedMember]) async throws -> Void
    ) async throws {
        try await store.forEachPageOfMembers(of: book, pageSize: pageSize, body)
    }
    /// What changed in the book after change `after`, oldest first, at most `limit`; removals included.
    package func changes(in book: RecordZone.ID, after: Int64, limit: Int) throws -> [LoggedMember] {
        try store.changes(in: book, after: after, limit: limit)
    }
    /// The contacts with these IDs that exist, in their order.
    package func contacts(_ ids: [UUID]) throws -> [Contact] { try store.contacts(ids) }

    // MARK: Group cards

    /// The book's group cards as members of its collection.
    package func groupCardMembers(of book: RecordZone.ID) throws -> [LoggedMember] {
        try store.groupCardMembers(of: book)
    }
    /// The group cards among `ids`, by ID.
    package func groupCards(_ ids: [UUID], in book: RecordZone.ID) throws -> [UUID: StoredGroupCard] {
        try store.groupCards(ids, in: book)
    }
    /// The IDs of the book's group cards.
    package func groupCardIDs(in book: RecordZone.ID) throws -> Set<UUID> { try store.groupCardIDs(in: book) }
}
