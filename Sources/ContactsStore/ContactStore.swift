import ContactsModel
import Foundation
import GRDB
import SyncCore
import SyncKit

/// One device's local data in one SQLite file: contacts, each contact's last known server record,
/// the engine's state, and an outbox of changes not yet confirmed by the server (the one record of
/// what is pending: see ``OutboxEntry`` and ``Transaction``).
///
/// An edit and its outbox entry are written in one transaction, so a crash at any instant either
/// loses the whole edit (the user was not told it was saved) or keeps it and sends it later.
package final class ContactStore: Sendable {

    let queue: DatabaseQueue
    package let path: String
    /// The images of the contacts' photos, beside the store (`<device>.photos/`). Made once: a URL made
    /// from a path asks the file system whether it is a directory, which every contact sent paid.
    package let photos: ContactPhotos

    /// The page cache, in KiB. Contacts are keyed by random IDs and listed by name, so a sync's or an
    /// import's transaction of hundreds or thousands of contacts touches index pages all over the file:
    /// with SQLite's default 2 MiB, a million contacts' first download spent a quarter of its time in the
    /// kernel reading evicted pages back and writing them again (cards in ID order: 109 – 114 s, and 85 s
    /// with this cache and ``checkpointPages``; in random order 124 s, and 100 – 117 s). The cache fills
    /// only as pages are read: a no-op sync stays small.
    static let pageCacheKiB = 32 * 1024

    /// How many pages the log holds before they are copied into the file (SQLite's default is 1,000):
    /// a page a sync changes in many transactions in a row (an index's, mostly) is copied once, not once
    /// every transaction or two.
    static let checkpointPages = 10_000

    /// The page size of a new file: SQLite's default, said so that it stays. 8 KiB pages keep 3% fewer bytes
    /// (rows of 500 bytes leave less of a page empty) but every random insert into an index writes a page twice
    /// the size: a million contacts' first download took 96 s with 4 KiB pages and 110 s with 8 KiB.
    static let pageSize = 4096

    /// The size the log is cut back to after a checkpoint, so that a large sync leaves no 40 MB log behind.
    static let logSizeLimit = 4 * 1_048_576

    /// The write-ahead log and the page cache as the store keeps them on each connection: WAL, a page cache
    /// of ``pageCacheKiB``, a checkpoint every ``checkpointPages``, the log cut back to ``logSizeLimit``.
    /// (`sync-bench`'s reference opens its bare SQLite file the same way.)
    package static func useLogAndCache(_ db: GRDB.Database) throws {
        try db.execute(sql: "PRAGMA journal_mode = WAL")
        try db.execute(sql: "PRAGMA cache_size = -\(pageCacheKiB)")
        try db.execute(sql: "PRAGMA wal_autocheckpoint = \(checkpointPages)")
        try db.execute(sql: "PRAGMA journal_size_limit = \(logSizeLimit)")
    }

    package init(path: String) throws {
        self.path = path
        let base = path.hasSuffix(".sqlite") ? String(path.dropLast(7)) : path
        photos = ContactPhotos(directory: URL(fileURLWithPath: base + ".photos", isDirectory: true))
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        // WAL: a commit writes the pages once, and the TUI reads while a sync writes. Every commit is flushed
        // to the disk (synchronous = FULL, SQLite's default) but the sync's own bookkeeping (see
        // ``write(durable:onCommit:_:)``).
        configuration.prepareDatabase { db in
            // A new file's page size and free-page policy (both fixed once the first table is made; a file an
            // earlier version made takes them in the rewrite after v14); before WAL, which writes the file's
            // first page. Only on a new file: on any other, setting auto-vacuum writes the file's header
            // again, a transaction flushed three times at every command.
            if try Int.fetchOne(db, sql: "PRAGMA page_count") == 0 {
                try db.execute(sql: "PRAGMA page_size = \(Self.pageSize)")
                try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            }
            try Self.useLogAndCache(db)
            Self.keepLogOnClose(db)
            StoredContactName.register(db.sqliteConnection!)
        }
        // Created private before SQLite opens it: SQLite gives its journal the same mode. The chmod fixes
        // files that earlier versions created with the default mode.
        let created = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        if created >= 0 { close(created) }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        chmod(path, 0o600)
        let migrator = Self.migrator
        let applied = try queue.read { db in try migrator.appliedIdentifiers(db) }
        try migrator.migrate(queue)
        if !applied.isEmpty && !applied.contains(Self.rebuildingMigration) {
            // v14 left the old contacts' table's pages free (half the file). Rewritten once, compactly and
            // with incremental auto-vacuum from now on, the file is as a new one is. Not a failure when it
            // cannot be (no room for the copy, another process reading): the file works as it is.
            try? queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
                try db.execute(sql: "VACUUM")
            }
        }
    }

    deinit { checkpointLargeLog() }

    // MARK: Reading

    package func contact(_ id: UUID) throws -> Contact? {
        try queue.read { db in try Self.contact(id, db) }
    }

    /// The contacts of `ids` that exist, in the order of `ids`, read in one transaction.
    package func contacts(_ ids: [UUID]) throws -> [Contact] {
        try queue.read { db in try ids.compactMap { try Self.contact($0, db) } }
    }

    /// Every contact, in list order; only those of one book when `book` is given.
    package func contacts(in book: RecordZone.ID? = nil) throws -> [Contact] {
        try contacts(matching: nil, in: book)
    }

    /// The list's rows, sorted for display (case and accents folded); only the first `limit` when given, for a
    /// first screen that need not wait for the whole list.
    package func summaries(limit: Int? = nil) throws -> [ContactSummary] {
        try queue.read { db in
            let zones = try Self.bookZones(db)
            // LIMIT -1 is no limit.
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT id, \(StoredContactName.sqlName)(json) AS name, sortKey, book, searchText, hasPhoto
                    FROM contact ORDER BY sortKey, id LIMIT ?
                    """,
                arguments: [limit ?? -1]
            ).compactMap { row in
                guard let id = RecordKey.id(row["id"]), let zoneID = zones[row["book"]] else { return nil }
                let sortKey: String = row["sortKey"]
                return ContactSummary(
                    id: id, name: row["name"], sortKey: sortKey, zoneID: zoneID,
                    searchText: Contact.searchText(nameKey: sortKey, stored: row["searchText"]),
                    hasPhoto: row["hasPhoto"])
            }
        }
    }

    package func count() throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: "SELECT n FROM contactCount") ?? 0 }
    }

    /// How many changes the server has not confirmed yet, without reading the outbox itself.
    package func pendingCount() throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox") ?? 0 }
    }

    /// The contact whose ID is `text` or starts with it (as `git` resolves commits).
    package func resolve(_ text: String) throws -> UUID {
        let prefix = text.trimmingCharacters(in: .whitespaces).uppercased()
        let digits = prefix.filter { $0 != "-" }
        guard !digits.isEmpty, digits.count <= 32, prefix.allSatisfy({ $0.isHexDigit || $0 == "-" }),
            // The IDs the prefix spans: its digits followed by all zeros, to its digits followed by all Fs.
            let first = UUID(hexDigits: digits.padding(toLength: 32, withPad: "0", startingAt: 0)),
            let last = UUID(hexDigits: digits.padding(toLength: 32, withPad: "F", startingAt: 0))
        else {
            throw ContactError.unknownID(text)
        }
        let matches = try queue.read { db in
            try Row.fetchAll(
                db, sql: "SELECT id FROM contact WHERE id BETWEEN ? AND ? LIMIT 2",
                arguments: [RecordKey.key(first), RecordKey.key(last)]
            ).compactMap { RecordKey.id($0["id"]) }
        }
        guard let id = matches.first else { throw ContactError.unknownID(text) }
        if matches.count > 1 && digits.count < 32 { throw ContactError.ambiguousID(text, matches: matches.count) }
        return id
    }

    package func serverRecord(_ id: UUID) throws -> SyncCore.RecordValue? {
        try queue.read { db in try Self.serverRecord(id, db) }
    }

    package func setting(_ key: Setting) throws -> String? {
        try queue.read { db in try Self.setting(key, db) }
    }

    /// Sets a setting; `durable: false` for the sync's bookkeeping (see ``write(durable:onCommit:_:)``).
    package func setSetting(_ key: Setting, _ value: String?, durable: Bool = true) throws {
        try write(durable: durable) { transaction in try Self.setSetting(key, value, transaction.db) }
    }

    /// The saved state of the engine on the private database, or on the shared one.
    package func engineState(_ key: Setting = .engineState) throws -> SyncEngine.State.Serialization? {
        guard let text = try setting(key) else { return nil }
        return try? JSONDecoder().decode(SyncEngine.State.Serialization.self, from: Data(text.utf8))
    }

    // MARK: Local edits

    /// Saves contacts and queues them for upload, in one transaction. (A device's engine learns of them
    /// when the device opens; ``ContactsDevice`` saves through its own transactions, which tell it at once.)
    package func saveLocal(_ contacts: [Contact]) throws {
        try write { transaction in
            for contact in contacts {
                try Self.put(contact, transaction.db)
                try transaction.enqueue(.record(.saveRecord(contact.recordID)))
            }
        }
    }

    // MARK: Rows (inside transactions)

    static func contact(_ id: UUID, _ db: GRDB.Database) throws -> Contact? {
        try storedContact(id, db).map(ContactFormat.decode)
    }

    /// The contact's row as stored (``ContactFormat``), not read.
    static func storedContact(_ id: UUID, _ db: GRDB.Database) throws -> Data? {
        try Data.fetchOne(
            db.cachedStatement(sql: "SELECT json FROM contact WHERE id = ?"), arguments: [RecordKey.key(id)])
    }

    /// Whether the contact whose key (``RecordKey``) is `key` is stored as `bytes`, compared by SQLite without
    /// copying the row out.
    private static func storedContactEquals(_ bytes: Data, key: DatabaseValue, _ db: GRDB.Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT json = ? FROM contact WHERE id = ?"), arguments: [bytes, key]) ?? false
    }

    /// Saves `contact`; a new one goes into `book`, a known one stays in the book it is in. `storedForm`, when
    /// given, is the contact in ``ContactFormat`` already (as a record brought it), kept compacted, not read.
    static func put(
        _ contact: Contact, storedForm: Data? = nil, in book: RecordZone.ID = Contact.zoneID, _ db: GRDB.Database
    ) throws {
        try put(ContactRow(contact, storedForm: storedForm), in: book, db)
    }

    /// Saves a contact's row; a new one goes into `book`, a known one stays in the book it is in.
    static func put(_ row: ContactRow, in book: RecordZone.ID, _ db: GRDB.Database) throws {
        // An upsert, not INSERT OR REPLACE: a replaced row would count as added without being removed.
        try db.cachedStatement(
            sql: """
                INSERT INTO contact (id, sortKey, json, book, searchText, hasPhoto)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET sortKey = excluded.sortKey, json = excluded.json,
                    searchText = excluded.searchText, hasPhoto = excluded.hasPhoto
                """
        )
        .execute(
            arguments: [
                RecordKey.key(row.id), row.sortKey, row.json, try bookNumber(book, db), row.searchText, row.hasPhoto,
            ])
    }

    /// The book `id` is in; nil for a contact this device does not have.
    static func book(of id: UUID, _ db: GRDB.Database) throws -> RecordZone.ID? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT zoneName, ownerName FROM contact JOIN bookNumber ON n = book WHERE id = ?"),
            arguments: [RecordKey.key(id)]
        ).map { RecordZone.ID(zoneName: $0["zoneName"], ownerName: $0["ownerName"]) }
    }

    static func removeContact(_ id: UUID, _ db: GRDB.Database) throws {
        try db.execute(sql: "DELETE FROM contact WHERE id = ?", arguments: [RecordKey.key(id)])
    }

    static func serverRecord(_ id: UUID, _ db: GRDB.Database) throws -> SyncCore.RecordValue? {
        try serverRecord(name: id.canonicalString, key: RecordKey.key(id), db)
    }

    /// The last known server record named `name` (a contact's UUID, or a book record's name).
    static func serverRecord(named name: String, _ db: GRDB.Database) throws -> SyncCore.RecordValue? {
        try serverRecord(name: name, key: RecordKey.key(named: name), db)
    }

    /// The last known server record named `name`, whose key (``RecordKey``) is `key`.
    private static func serverRecord(name: String, key: DatabaseValue, _ db: GRDB.Database) throws
        -> SyncCore.RecordValue?
    {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT json, contact, sealedVersion,
                            CASE WHEN sharesContact THEN (SELECT json FROM contact WHERE id = serverRecord.id) END
                                AS sharedContact
                        FROM serverRecord WHERE id = ?
                        """), arguments: [key])
        else { return nil }
        return try serverRecord(row, name: name)
    }

    /// The last known server record named `name` from a row of its columns `json`, `contact` and
    /// `sealedVersion`, and `sharedContact`: the contact's row when the record shares it. Nil when `json` is
    /// (no such record).
    static func serverRecord(_ row: Row, name: String) throws -> SyncCore.RecordValue? {
        guard let json = row["json"] as Data?, var record = StoredServerRecord.decode(json, name: name) else {
            return nil
        }
        if let contact = (row["contact"] as Data?) ?? (row["sharedContact"] as Data?) {
            record.replaceWithoutChange(
                encrypted: Contact.contactField, by: .bytes(try ContactFormat.wire(stored: contact)))
        }
        record.sealedVersion = (row["sealedVersion"] as Int64?).map { UInt64(bitPattern: $0) }
        return record
    }

    /// The change tag of the last known server record (nil for none, or one stored before tags were kept).
    /// The last known server record's change tag: nil when there is no such record, `.some(nil)` for one
    /// kept before the store kept change tags (it is read whole when needed).
    static func serverChangeTag(_ id: String, _ db: GRDB.Database) throws -> String?? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT changeTag FROM serverRecord WHERE id = ?"),
            arguments: [RecordKey.key(named: id)]
        )
        .map { $0["changeTag"] as String? }
    }

    /// `sharesContact` is true when the caller knows the contact's row holds the record's contact as it
    /// is (it stored it from this record just now), which spares reading the row to compare.
    static func putServerRecord(
        _ record: SyncCore.RecordValue?, for id: UUID, sharesContact knownShared: Bool = false, _ db: GRDB.Database
    ) throws {
        try putServerRecord(record, name: id.canonicalString, key: RecordKey.key(id), sharesContact: knownShared, db)
    }

    static func putServerRecord(
        _ record: SyncCore.RecordValue?, named name: String, sharesContact knownShared: Bool = false,
        _ db: GRDB.Database
    ) throws {
        try putServerRecord(record, name: name, key: RecordKey.key(named: name), sharesContact: knownShared, db)
    }

    /// Saves or removes the last known server record named `name`, whose key (``RecordKey``) is `key`.
    private static func putServerRecord(
        _ record: SyncCore.RecordValue?, name: String, key: DatabaseValue, sharesContact knownShared: Bool,
        _ db: GRDB.Database
    ) throws {
        if var record {
            // A contact's record keeps its contact beside it, or shares the contact's row when the two are
            // the same (the usual case: just sent, or just fetched and stored as it came).
            var contact: Data?
            var sharesContact = false
            if case .bytes(let bytes)? = record[encrypted: Contact.contactField] {
                if knownShared {
                    sharesContact = true
                } else {
                    // Compared as the row keeps it (compacted).
                    let stored = ContactFormat.stored(wire: bytes)
                    sharesContact = try storedContactEquals(stored, key: key, db)
                    if !sharesContact { contact = stored }
                }
                record.replaceWithoutChange(encrypted: Contact.contactField, by: nil)
            }
            try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO serverRecord (id, json, changeTag, contact, sharesContact, sealedVersion)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """
            )
            .execute(
                arguments: [
                    key, StoredServerRecord.encode(record, name: name), record.recordChangeTag, contact, sharesContact,
                    record.sealedVersion.map { Int64(bitPattern: $0) },
                ])
        } else {
            try db.execute(sql: "DELETE FROM serverRecord WHERE id = ?", arguments: [key])
        }
    }

    static func setting(_ key: Setting, _ db: GRDB.Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = ?", arguments: [key.rawValue])
    }

    static func setSetting(_ key: Setting, _ value: String?, _ db: GRDB.Database) throws {
        if let value {
            try db.execute(
                sql: "INSERT OR REPLACE INTO setting (key, value) VALUES (?, ?)", arguments: [key.rawValue, value])
        } else {
            try db.execute(sql: "DELETE FROM setting WHERE key = ?", arguments: [key.rawValue])
        }
    }

    /// Queues a save of every contact whose server record keeps its fields in plain, as versions before
    /// encryption wrote them, so that the server's copy is replaced by an encrypted one. Runs once.
    static func queuePlainRecordsForEncryption(_ transaction: Transaction) throws {
        let db = transaction.db
        guard try setting(.encryptedFieldsMigrated, db) == nil else { return }
        let rows = try Row.fetchAll(db, sql: "SELECT id, json FROM serverRecord")
        for row in rows {
            guard let name = RecordKey.name(row["id"]), let record = StoredServerRecord.decode(row["json"], name: name),
                Contact.hasPlainFields(record),
                let id = UUID(uuidString: record.recordID.recordName), try contact(id, db) != nil
            else { continue }
            try transaction.enqueue(.record(.saveRecord(record.recordID)))
        }
        try setSetting(.encryptedFieldsMigrated, "1", db)
    }
}

/// A row of the contact list: what the list shows, without decoding whole contacts.
public struct ContactSummary: Sendable, Hashable, Identifiable {
    public var id: UUID
    public var name: String
    public var sortKey: String
    /// The book the contact is in.
    public var zoneID: RecordZone.ID = Contact.zoneID
    /// What a search looks through (``Contact/searchText``).
    public var searchText = ""
    /// Whether the contact has a photo.
    public var hasPhoto = false
}

/// Values a device keeps besides its contacts.
public enum Setting: String, Sendable {
    case engineState, serverURL, deviceID, token, username, userRecordName, lastSync, lastError, lastErrorDate
    /// The state of the engine on the shared database (books others share with this account).
    case sharedEngineState
    /// The passphrase that opens the account's encrypted values; never sent to the server.
    case passphrase
    /// The account key derived from the passphrase, filed under its derivation's ID ("id:base64"), so
    /// that a command need not run scrypt again; never sent to the server.
    case derivedAccountKey
    /// Set once the contacts that versions before encryption stored in plain have been queued to be saved encrypted.
    case encryptedFieldsMigrated
    /// The latest edit time this device has made or seen (``EditClock``).
    case latestEditTime
    /// How many seconds the server's clock is ahead of this device's (``EditClock``).
    case serverClockOffset
    /// Random, set when the change log began (``ContactStore/startChangeLog()``): sync tokens carry it, so a
    /// token from another device file, or from before the log was rebuilt, is recognised as not this log's.
    case changeLogEpoch
}
