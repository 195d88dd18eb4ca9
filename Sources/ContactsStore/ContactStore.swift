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

    /// The page size of a new file. Rows of 500 bytes leave a 4 KiB page a tenth empty on average, an 8 KiB
    /// page half of that (28 bytes a contact less at 10,000; the indexes have half as many pages to find).
    static let pageSize = 8192

    /// The size the log is cut back to after a checkpoint, so that a large sync leaves no 40 MB log behind.
    static let logSizeLimit = 4 * 1_048_576

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
            // A new file's page size and free-page policy (both fixed once the first table is made: a file
            // an earlier version made keeps 4 KiB pages and its free pages); before WAL, which writes the
            // file's first page.
            try db.execute(sql: "PRAGMA page_size = \(Self.pageSize)")
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA cache_size = -\(Self.pageCacheKiB)")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.checkpointPages)")
            try db.execute(sql: "PRAGMA journal_size_limit = \(Self.logSizeLimit)")
            StoredContactName.register(db.sqliteConnection!)
        }
        // Created private before SQLite opens it: SQLite gives its journal the same mode. The chmod fixes
        // files that earlier versions created with the default mode.
        let created = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        if created >= 0 { close(created) }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        chmod(path, 0o600)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE contact (id TEXT PRIMARY KEY, name TEXT NOT NULL, sortKey TEXT NOT NULL, json BLOB NOT NULL);
                    CREATE INDEX contactSort ON contact(sortKey, id);
                    CREATE TABLE serverRecord (id TEXT PRIMARY KEY, json BLOB NOT NULL);
                    CREATE TABLE outbox (key TEXT PRIMARY KEY, kind TEXT NOT NULL, version INTEGER NOT NULL);
                    CREATE TABLE setting (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                    """)
        }
        migrator.registerMigration("v2: server record change tags") { db in
            // The change tag of each last known server record, so that a fetch can pass over the records this
            // device already holds (its own saves come back in its next fetch) without decoding them.
            try db.execute(sql: "ALTER TABLE serverRecord ADD COLUMN changeTag TEXT")
        }
        migrator.registerMigration("v3: contact count") { db in
            // Counting the contacts read the whole of an index (a sync counts before and after: 2,500 page
            // reads at 100,000 contacts). Triggers keep the count as contacts come and go.
            try db.execute(
                sql: """
                    CREATE TABLE contactCount (n INTEGER NOT NULL);
                    INSERT INTO contactCount SELECT COUNT(*) FROM contact;
                    CREATE TRIGGER contactAdded AFTER INSERT ON contact BEGIN UPDATE contactCount SET n = n + 1; END;
                    CREATE TRIGGER contactRemoved AFTER DELETE ON contact BEGIN UPDATE contactCount SET n = n - 1; END;
                    """)
        }
        migrator.registerMigration("v4: address books") { db in
            // Books are zones. Everything earlier versions stored is in the default one, which the
            // column defaults name; an outbox entry's zone says which engine sends it.
            try db.execute(
                sql: """
                    CREATE TABLE book (
                        zoneName TEXT NOT NULL, ownerName TEXT NOT NULL, name TEXT NOT NULL, access TEXT NOT NULL,
                        ownerUsername TEXT, participants BLOB, PRIMARY KEY (zoneName, ownerName));
                    ALTER TABLE contact ADD COLUMN zoneName TEXT NOT NULL DEFAULT 'Contacts';
                    ALTER TABLE contact ADD COLUMN ownerName TEXT NOT NULL DEFAULT '__defaultOwner__';
                    ALTER TABLE outbox ADD COLUMN zoneName TEXT NOT NULL DEFAULT 'Contacts';
                    ALTER TABLE outbox ADD COLUMN ownerName TEXT NOT NULL DEFAULT '__defaultOwner__';
                    """)
            try Self.putBook(
                AddressBook(zoneID: Contact.zoneID, name: AddressBook.defaultName, access: .owner), db)
        }
        migrator.registerMigration("v5: sort keys spell letters of their own") { db in
            // Ł, Ø, ß, Æ … and katakana now fold as people type them; names in plain ASCII are unchanged.
            let rows = try Row.fetchAll(db, sql: "SELECT id, name, sortKey FROM contact")
            for row in rows {
                let name: String = row["name"]
                let key = Contact.sortKey(name)
                if key != row["sortKey"] {
                    try db.execute(sql: "UPDATE contact SET sortKey = ? WHERE id = ?", arguments: [key, row["id"]])
                }
            }
        }
        migrator.registerMigration("v6: search text") { db in
            // Every field folded for searching, kept beside the contact so that a search reads no contact
            // it does not find (``Contact/searchText``). Kept without the name's segment, which is the sort key
            // (``Contact/searchTextAfterName``); versions up to 0.3 kept it whole, read as it is.
            try db.execute(sql: "ALTER TABLE contact ADD COLUMN searchText TEXT NOT NULL DEFAULT ''")
            let rows = try Row.fetchCursor(db, sql: "SELECT id, json FROM contact")
            let update = try db.makeStatement(sql: "UPDATE contact SET searchText = ? WHERE id = ?")
            while let row = try rows.next() {
                let text = (try? ContactFormat.decode(row["json"]))?.searchTextAfterName ?? ""
                try update.execute(arguments: [text, row["id"] as String])
            }
        }
        migrator.registerMigration("v7: conflict log") { db in
            // Values merges dropped (``ContactConflict``), each kept whole in `json`, newest first by `date`.
            try db.execute(
                sql: """
                    CREATE TABLE conflict (
                        id TEXT PRIMARY KEY, zoneName TEXT NOT NULL, ownerName TEXT NOT NULL, date REAL NOT NULL,
                        json BLOB NOT NULL);
                    CREATE INDEX conflictDate ON conflict(date);
                    """)
        }
        migrator.registerMigration("v8: server records share their contact") { db in
            // A last known server record held its contact a second time (as base64 in its JSON), most of
            // the bytes a sync writes. Now the contact is kept beside it only when it differs from the
            // contact's row (`contact`); when they are the same, `sharesContact` says so and the row is
            // read. Before the row changes or goes, the triggers give the server record its own copy.
            try db.execute(
                sql: """
                    ALTER TABLE serverRecord ADD COLUMN contact BLOB;
                    ALTER TABLE serverRecord ADD COLUMN sharesContact INTEGER NOT NULL DEFAULT 0;
                    \(Self.serverContactTriggers)
                    """)
        }
        migrator.registerMigration("v9: the outbox's shared entries indexed") { db in
            // Whether a database has record changes to send is asked at every launch and after every send;
            // without this, the shared database's answer read every entry of a large private outbox.
            // Partial: an import into one's own books writes nothing more.
            try db.execute(
                sql: "CREATE INDEX outboxShared ON outbox(key) WHERE \(OutboxEntry.scopeCondition(.shared))")
        }
        migrator.registerMigration("v10: tampered records and sealed versions") { db in
            // Each last known server record's sealed version (``SyncCore/RecordValue/sealedVersion``), read
            // without decoding its JSON when a fetched page asks which versions this device has seen; and the
            // records the sync library refused as tampered (``TamperedRecord``), kept whole in `json`, with the
            // record as it arrived in `arrived` (the same record refused twice is kept once).
            try db.execute(
                sql: """
                    ALTER TABLE serverRecord ADD COLUMN sealedVersion INTEGER;
                    CREATE TABLE tamperedRecord (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT, date REAL NOT NULL, recordName TEXT NOT NULL,
                        arrived TEXT NOT NULL, json BLOB NOT NULL);
                    CREATE INDEX tamperedRecordName ON tamperedRecord(recordName);
                    """)
        }
        migrator.registerMigration("v11: photos") { db in
            // Whether the contact has a photo, for the list to mark it without reading the contact. A version
            // before photos kept a photo's line among the extras of a contact synced from a newer one.
            try db.execute(
                sql: """
                    ALTER TABLE contact ADD COLUMN hasPhoto INTEGER NOT NULL DEFAULT 0;
                    UPDATE contact SET hasPhoto = 1 WHERE instr(json, CAST('\(ContactPhoto.propertyName)' AS BLOB)) > 0;
                    """)
        }
        migrator.registerMigration("v12: server records without row IDs") { db in
            // Kept in the tree of their IDs, not in a table of row IDs with an index of IDs beside it: 51 bytes
            // a contact less (a million contacts' file: 51 MB). The triggers name the table, so they are made
            // again with it.
            try db.execute(
                sql: """
                    DROP TRIGGER contactChangedKeepsServerContact;
                    DROP TRIGGER contactRemovedKeepsServerContact;
                    CREATE TABLE serverRecordByID (
                        id TEXT PRIMARY KEY NOT NULL, json BLOB NOT NULL, changeTag TEXT, contact BLOB,
                        sharesContact INTEGER NOT NULL DEFAULT 0, sealedVersion INTEGER) WITHOUT ROWID;
                    INSERT INTO serverRecordByID (id, json, changeTag, contact, sharesContact, sealedVersion)
                        SELECT id, json, changeTag, contact, sharesContact, sealedVersion FROM serverRecord
                        WHERE id IS NOT NULL;
                    DROP TABLE serverRecord;
                    ALTER TABLE serverRecordByID RENAME TO serverRecord;
                    \(Self.serverContactTriggers)
                    """)
        }
        migrator.registerMigration("v13: the list's index by sort key alone") { db in
            // The list is read by sort key, then ID: the index kept both (the ID as 36 characters, 70 bytes a
            // contact). By sort key alone it takes about 30; SQLite orders contacts of one sort key by ID as
            // it reads them (a sort of each run of equal keys, which are few), so the order is the same.
            try db.execute(
                sql: """
                    DROP INDEX contactSort;
                    CREATE INDEX contactSort ON contact(sortKey);
                    """)
        }
        migrator.registerMigration("v14: contacts keyed by their UUIDs' bytes, named by their rows") { db in
            // Every key that is a UUID's canonical text (every contact's, in four tables) becomes the UUID's 16
            // bytes (``RecordKey``), and the column of names goes: the list reads the name from the stored row
            // (``StoredContactName``). About 80 bytes a contact. Contact IDs were always written upper case;
            // `upper` makes sure. The update fires no trigger's action (neither a book nor a row changes).
            db.add(function: RecordKey.function)
            defer { db.remove(function: RecordKey.function) }
            try db.execute(
                sql: """
                    UPDATE contact SET id = recordKey(upper(id));
                    ALTER TABLE contact DROP COLUMN name;
                    UPDATE serverRecord SET id = recordKey(id);
                    """)
            for table in ["contactChange", "resourceName"] where try db.tableExists(table) {
                try db.execute(sql: "UPDATE \(table) SET id = recordKey(id)")
            }
        }
        try migrator.migrate(queue)
    }

    /// Before a contact's row changes or goes, a server record that shares it gets its own copy.
    private static let serverContactTriggers = """
        CREATE TRIGGER contactChangedKeepsServerContact BEFORE UPDATE OF json ON contact
            WHEN old.json IS NOT new.json
            BEGIN
                UPDATE serverRecord SET contact = old.json, sharesContact = 0
                WHERE id = old.id AND sharesContact = 1;
            END;
        CREATE TRIGGER contactRemovedKeepsServerContact BEFORE DELETE ON contact
            BEGIN
                UPDATE serverRecord SET contact = old.json, sharesContact = 0
                WHERE id = old.id AND sharesContact = 1;
            END;
        """

    // MARK: Reading

    package func contact(_ id: UUID) throws -> Contact? {
        try queue.read { db in try Self.contact(id, db) }
    }

    /// Every contact, in list order; only those of one book when `book` is given.
    package func contacts(in book: RecordZone.ID? = nil) throws -> [Contact] {
        try queue.read { db in
            guard let book else {
                return try Data.fetchAll(db, sql: "SELECT json FROM contact ORDER BY sortKey, id").map(
                    ContactFormat.decode)
            }
            return try Data.fetchAll(
                db, sql: "SELECT json FROM contact WHERE zoneName = ? AND ownerName = ? ORDER BY sortKey, id",
                arguments: [book.zoneName, book.ownerName]
            ).map(ContactFormat.decode)
        }
    }

    /// The list's rows, sorted for display (case and accents folded); only the first `limit` when given, for a
    /// first screen that need not wait for the whole list.
    package func summaries(limit: Int? = nil) throws -> [ContactSummary] {
        try queue.read { db in
            // LIMIT -1 is no limit.
            try Row.fetchAll(
                db,
                sql:
                    """
                    SELECT id, \(StoredContactName.sqlName)(json) AS name, sortKey, zoneName, ownerName, searchText,
                        hasPhoto
                    FROM contact ORDER BY sortKey, id LIMIT ?
                    """,
                arguments: [limit ?? -1]
            ).compactMap { row in
                guard let id = RecordKey.id(row["id"]) else { return nil }
                let sortKey: String = row["sortKey"]
                return ContactSummary(
                    id: id, name: row["name"], sortKey: sortKey,
                    zoneID: RecordZone.ID(zoneName: row["zoneName"], ownerName: row["ownerName"]),
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
    @discardableResult
    package func saveLocal(_ contacts: [Contact]) throws -> [OutboxEntry] {
        try write { transaction in
            try contacts.map { contact in
                try Self.put(contact, transaction.db)
                return try transaction.enqueue(.record(.saveRecord(contact.recordID)))
            }
        }
    }

    // MARK: Rows (inside transactions)

    static func contact(_ id: UUID, _ db: GRDB.Database) throws -> Contact? {
        try storedContact(id, db).map(ContactFormat.decode)
    }

    /// The contact's row as stored (``ContactFormat``), not read.
    static func storedContact(_ id: UUID, _ db: GRDB.Database) throws -> Data? {
        try storedContact(key: RecordKey.key(id), db)
    }

    /// The stored row of the contact whose record is named `name` (its canonical UUID).
    static func storedContact(named name: String, _ db: GRDB.Database) throws -> Data? {
        try storedContact(key: RecordKey.key(named: name), db)
    }

    private static func storedContact(key: DatabaseValue, _ db: GRDB.Database) throws -> Data? {
        try Data.fetchOne(db.cachedStatement(sql: "SELECT json FROM contact WHERE id = ?"), arguments: [key])
    }

    /// Whether the contact whose record is named `name` is stored as `bytes`, compared by SQLite without
    /// copying the row out.
    static func storedContactEquals(_ bytes: Data, named name: String, _ db: GRDB.Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT json = ? FROM contact WHERE id = ?"),
            arguments: [bytes, RecordKey.key(named: name)]) ?? false
    }

    /// Saves `contact`; a new one goes into `book`, a known one stays in the book it is in. `storedForm`, when
    /// given, is the contact in ``ContactFormat`` already (as a record brought it), kept compacted, not read.
    static func put(
        _ contact: Contact, storedForm: Data? = nil, in book: RecordZone.ID = Contact.zoneID, _ db: GRDB.Database
    ) throws {
        let key = Contact.sortKey(contact.name)
        // An upsert, not INSERT OR REPLACE: a replaced row would count as added without being removed.
        try db.cachedStatement(
            sql: """
                INSERT INTO contact (id, sortKey, json, zoneName, ownerName, searchText, hasPhoto)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET sortKey = excluded.sortKey, json = excluded.json,
                    searchText = excluded.searchText, hasPhoto = excluded.hasPhoto
                """
        )
        .execute(
            arguments: [
                RecordKey.key(contact.id), key,
                storedForm.map { ContactFormat.stored(wire: $0) } ?? ContactFormat.stored(contact),
                book.zoneName, book.ownerName, contact.searchTextAfterName, contact.photo != nil,
            ])
    }

    /// The book `id` is in; nil for a contact this device does not have.
    static func book(of id: UUID, _ db: GRDB.Database) throws -> RecordZone.ID? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT zoneName, ownerName FROM contact WHERE id = ?"),
            arguments: [RecordKey.key(id)]
        ).map { RecordZone.ID(zoneName: $0["zoneName"], ownerName: $0["ownerName"]) }
    }

    static func removeContact(_ id: UUID, _ db: GRDB.Database) throws {
        try db.execute(sql: "DELETE FROM contact WHERE id = ?", arguments: [RecordKey.key(id)])
    }

    static func serverRecord(_ id: UUID, _ db: GRDB.Database) throws -> SyncCore.RecordValue? {
        try serverRecord(named: id.canonicalString, db)
    }

    /// The last known server record named `name` (a contact's UUID, or a book record's name).
    static func serverRecord(named name: String, _ db: GRDB.Database) throws -> SyncCore.RecordValue? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT json, contact, sealedVersion,
                            CASE WHEN sharesContact THEN (SELECT json FROM contact WHERE id = serverRecord.id) END
                                AS sharedContact
                        FROM serverRecord WHERE id = ?
                        """), arguments: [RecordKey.key(named: name)]),
            var record = StoredServerRecord.decode(row["json"], name: name)
        else { return nil }
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
        try putServerRecord(record, named: id.canonicalString, sharesContact: knownShared, db)
    }

    static func putServerRecord(
        _ record: SyncCore.RecordValue?, named name: String, sharesContact knownShared: Bool = false,
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
                    sharesContact = try storedContactEquals(stored, named: name, db)
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
                    RecordKey.key(named: name), StoredServerRecord.encode(record, name: name), record.recordChangeTag,
                    contact, sharesContact,
                    record.sealedVersion.map { Int64(bitPattern: $0) },
                ])
        } else {
            try db.execute(sql: "DELETE FROM serverRecord WHERE id = ?", arguments: [RecordKey.key(named: name)])
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
