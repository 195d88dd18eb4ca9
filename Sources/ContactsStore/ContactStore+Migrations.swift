import ContactsModel
import Foundation
import GRDB
import SyncCore

/// The device file's migrations, in order: each runs once, in a transaction, when a file an earlier version
/// made is first opened (the CHANGELOG's Upgrading sections say what each costs).
extension ContactStore {
    static var migrator: DatabaseMigrator {
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
                    \(Self.contactCountTriggers)
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
        migrator.registerMigration(rebuildingMigration) { db in
            // The contacts' table is made again: keyed by the UUID's 16 bytes (``RecordKey``), the book a number
            // (``bookNumber(_:_:)``), no column of names (the list reads the name from the stored row,
            // ``StoredContactName``). About 100 bytes a contact. The other key columns' UUIDs become bytes in
            // place. Contact IDs were always written upper case; `upper` makes sure. Dropping the table drops
            // its index and triggers, made again after it; copying rows fires none of them.
            db.add(function: RecordKey.function)
            defer { db.remove(function: RecordKey.function) }
            try db.execute(
                sql: """
                    \(Self.bookNumberTable)
                    INSERT OR IGNORE INTO bookNumber (zoneName, ownerName) SELECT DISTINCT zoneName, ownerName FROM contact;
                    CREATE TABLE contactByKey (
                        id BLOB PRIMARY KEY NOT NULL, sortKey TEXT NOT NULL, json BLOB NOT NULL,
                        book INTEGER NOT NULL DEFAULT \(Self.defaultBookNumber), searchText TEXT NOT NULL,
                        hasPhoto INTEGER NOT NULL DEFAULT 0);
                    INSERT INTO contactByKey (id, sortKey, json, book, searchText, hasPhoto)
                        SELECT recordKey(upper(id)), sortKey, json,
                            (SELECT n FROM bookNumber b WHERE b.zoneName = c.zoneName AND b.ownerName = c.ownerName),
                            searchText, hasPhoto
                        FROM contact c ORDER BY rowid;
                    DROP TABLE contact;
                    ALTER TABLE contactByKey RENAME TO contact;
                    CREATE INDEX contactSort ON contact(sortKey);
                    \(Self.contactCountTriggers)
                    \(Self.serverContactTriggers)
                    UPDATE serverRecord SET id = recordKey(id);
                    """)
            for table in ["contactChange", "resourceName"] where try db.tableExists(table) {
                try db.execute(sql: "UPDATE \(table) SET id = recordKey(id)")
            }
            if try db.tableExists("contactChange") { try db.execute(sql: Self.changeLogTriggers) }
        }
        migrator.registerMigration("v15: the outbox keyed by its entries' keys alone") { db in
            // A table without row IDs: each entry is written once, in key order, not as a row and again in
            // the index of its key (59 bytes a contact during an import, and a second B-tree written at
            // each entry queued and settled). Entries are read in key order: nothing read them in the
            // order they were queued but the zone changes, which are of different zones.
            try db.execute(
                sql: """
                    CREATE TABLE outboxByKey (
                        key TEXT PRIMARY KEY NOT NULL, kind TEXT NOT NULL, version INTEGER NOT NULL,
                        zoneName TEXT NOT NULL, ownerName TEXT NOT NULL) WITHOUT ROWID;
                    INSERT INTO outboxByKey SELECT key, kind, version, zoneName, ownerName FROM outbox;
                    DROP TABLE outbox;
                    ALTER TABLE outboxByKey RENAME TO outbox;
                    CREATE INDEX outboxShared ON outbox(key) WHERE \(OutboxEntry.scopeCondition(.shared));
                    """)
        }
        migrator.registerMigration("v16: other accounts' public keys as this device saw and verified them") { db in
            try db.execute(
                sql: """
                    CREATE TABLE knownKey (
                        userRecordName TEXT PRIMARY KEY NOT NULL, username TEXT NOT NULL, publicKey BLOB NOT NULL,
                        verifiedAt REAL, refusedKey BLOB, notice TEXT) WITHOUT ROWID;
                    """)
        }
        return migrator
    }

    /// The migration that makes the contacts' table again; a file it ran on is vacuumed after it.
    static let rebuildingMigration = "v14: contacts keyed by their UUIDs' bytes, in numbered books"

    /// The count of contacts follows them as they come and go.
    static let contactCountTriggers = """
        CREATE TRIGGER contactAdded AFTER INSERT ON contact BEGIN UPDATE contactCount SET n = n + 1; END;
        CREATE TRIGGER contactRemoved AFTER DELETE ON contact BEGIN UPDATE contactCount SET n = n - 1; END;
        """

    /// Before a contact's row changes or goes, a server record that shares it gets its own copy.
    static let serverContactTriggers = """
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

}
