import ContactsModel
import Foundation
import SyncCore
import SyncCrypto
import SyncKit

/// What an app reads from a device: contacts, books, conflicts, settings and counts. Each call reads in a
/// transaction of its own, so a call sees one consistent store; nothing here writes (edits go through
/// ``ContactsDevice``, which syncs them).
public struct ContactsReader: Sendable {
    let store: ContactStore

    /// A reader of `store` (a device hands out ``ContactsDevice/reader``; tools of this package that only
    /// read a store's file open one here).
    package init(_ store: ContactStore) {
        self.store = store
    }

    // MARK: Contacts

    /// The contact with `id`; nil when there is none.
    public func contact(_ id: UUID) throws -> Contact? { try store.contact(id) }
    /// Every contact, in list order; only those of `book` when given.
    public func contacts(in book: RecordZone.ID? = nil) throws -> [Contact] { try store.contacts(in: book) }
    /// The contacts `search` matches, in list order; only those of `book` when given.
    public func contacts(matching search: ContactSearch, in book: RecordZone.ID? = nil) throws -> [Contact] {
        try store.contacts(matching: search, in: book)
    }
    /// Hands `body` each contact in list order, read one at a time so that a large store is never held
    /// whole, until it returns false: only those `search` matches, and those of `book`, when given.
    public func forEachContact(
        matching search: ContactSearch? = nil, in book: RecordZone.ID? = nil, _ body: (Contact) throws -> Bool
    ) throws {
        try store.forEachContact(matching: search, in: book, body)
    }
    /// The first contact, in list order, with `address` among its emails (letter case aside).
    public func contact(withEmail address: String) throws -> Contact? { try store.contact(withEmail: address) }
    /// The list's contacts packed column by column, in list order (the first `limit` when given).
    public func listing(limit: Int? = nil) throws -> ContactListing { try store.listing(limit: limit) }
    /// Hands `body` each contact `search` finds in any field (as ``contacts(matching:in:)`` does), with its
    /// sort key and rank, in the table's order, until it returns false or `isCancelled` says so; only those
    /// of `book` when given.
    public func forEachMatch(
        of search: ContactSearch, in book: RecordZone.ID? = nil, isCancelled: () -> Bool = { false },
        _ body: (_ id: UUID, _ sortKey: UnsafeBufferPointer<UInt8>, _ rank: Int) throws -> Bool
    ) throws {
        try store.forEachMatch(of: search, in: book, isCancelled: isCancelled, body)
    }
    /// How many contacts there are.
    public func count() throws -> Int { try store.count() }
    /// The contact whose ID is `text` or starts with it.
    public func resolve(_ text: String) throws -> UUID { try store.resolve(text) }
    /// The groups contacts are in, with how many are in each.
    public func groups() throws -> [GroupCount] { try store.groups() }
    /// The groups of likely duplicates.
    public func duplicates() throws -> [DuplicateGroup] { try store.duplicates() }
    /// The birthdays and anniversaries from `today` to `days` days after it, soonest first.
    public func upcomingDates(from today: DateComponents, within days: Int) throws -> [UpcomingDate] {
        try store.upcomingDates(from: today, within: days)
    }

    // MARK: Books

    /// Every book, in list order.
    public func books() throws -> [AddressBook] { try store.books() }
    /// The book of `zoneID`; nil when there is none.
    public func book(_ zoneID: RecordZone.ID) throws -> AddressBook? { try store.book(zoneID) }
    /// The book the contact with `id` is in.
    public func book(of id: UUID) throws -> AddressBook? { try store.book(of: id) }
    /// How many contacts each book holds.
    public func bookCounts() throws -> [RecordZone.ID: Int] { try store.bookCounts() }
    /// The book named `text` (letter case aside; `NAME@OWNER` tells apart two books of one name).
    public func resolveBook(_ text: String) throws -> AddressBook { try store.resolveBook(text) }

    // MARK: Sync

    /// Changes saved on this device that the server has not confirmed.
    public func pendingCount() throws -> Int { try store.pendingCount() }

    /// Accounts whose verified key the server no longer gives (refused until verified again).
    public func refusedKeys() throws -> [KeyChange] { try store.refusedKeys() }

    /// Notices of account keys that changed since they were last shown; they are marked shown.
    public func takeKeyNotices() throws -> [String] { try store.takeKeyNotices() }

    /// Other accounts' keys as this device knows them, by user record name.
    public func knownKeys() throws -> [String: KnownKey] { try store.knownKeys() }

    /// What the app shows of other accounts' keys: the accounts whose key the person verified (and the
    /// server still gives), by user record name, and what to say of each verified key the server no
    /// longer gives.
    public func keyTrust() throws -> KeyTrust {
        let refused = try store.refusedKeys()
        let refusedNames = Set(refused.map(\.previous.userRecordName))
        let known = try store.knownKeys().values
        return KeyTrust(
            verified: Set(known.filter { $0.isVerified }.map(\.userRecordName)).subtracting(refusedNames),
            refused: refusedNames, warnings: refused.map(\.description),
            safetyNumbers: Dictionary(known.map { ($0.userRecordName, $0.fingerprint.safetyNumber) }) { a, _ in a })
    }
    /// The conflict log, newest first.
    public func conflicts() throws -> [ContactConflict] { try store.conflicts() }
    /// How many entries the conflict log holds.
    public func conflictCount() throws -> Int { try store.conflictCount() }
    /// The conflict entry whose ID is `text` or starts with it.
    public func resolveConflict(_ text: String) throws -> ContactConflict { try store.resolveConflict(text) }
    /// The records refused as tampered with, kept for inspection.
    public func tamperedRecords() throws -> [TamperedRecord] { try store.tamperedRecords() }
    /// How many records were refused as tampered with.
    public func tamperedCount() throws -> Int { try store.tamperedCount() }
    /// A setting of the device (its server, its account's name, when it last synced).
    public func setting(_ key: Setting) throws -> String? { try store.setting(key) }
}
