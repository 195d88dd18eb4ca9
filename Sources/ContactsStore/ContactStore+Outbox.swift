import ContactsModel
import GRDB
import SyncCore
import SyncKit

/// A change the server has not confirmed yet. `version` grows with each edit of the same item,
/// so a confirmation of an older version leaves a newer edit pending.
public struct OutboxEntry: Sendable, Hashable {
    public enum Change: Sendable, Hashable {
        case record(SyncEngine.PendingRecordZoneChange)
        case zone(SyncEngine.PendingDatabaseChange)
    }

    /// What a change does to its item, as the outbox's `kind` column says it.
    enum Kind: String {
        case save, delete
    }

    public var change: Change
    public var version: Int64

    /// The outbox row's key ("record:<name>", "zone:<name>"): one row per item, whatever the change.
    var key: String {
        switch change {
        case .record(let change): Self.recordKey(named: change.recordID.recordName)
        case .zone(let change): "zone:" + change.zoneID.zoneName
        }
    }

    /// The key of the outbox row of the record named `name`.
    static func recordKey(named name: String) -> String { "record:" + name }

    var kind: Kind {
        switch change {
        case .record(.saveRecord), .zone(.saveZone): .save
        case .record(.deleteRecord), .zone(.deleteZone): .delete
        }
    }

    init(change: Change, version: Int64 = 0) {
        self.change = change
        self.version = version
    }

    /// The entry a row holds; nil for a row this version does not understand.
    init?(row: Row) {
        guard let kind = Kind(rawValue: row["kind"]) else { return nil }
        let key: String = row["key"]
        let zoneID = RecordZone.ID(zoneName: row["zoneName"], ownerName: row["ownerName"])
        if key.hasPrefix("zone:") {
            change = .zone(kind == .save ? .saveZone(RecordZone(zoneID: zoneID)) : .deleteZone(zoneID))
        } else if key.hasPrefix("record:") {
            let recordID = RecordValue.ID(recordName: String(key.dropFirst(7)), zoneID: zoneID)
            change = .record(kind == .save ? .saveRecord(recordID) : .deleteRecord(recordID))
        } else {
            return nil
        }
        version = row["version"]
    }

    /// The zone the change is in, or of.
    var zoneID: RecordZone.ID {
        switch change {
        case .record(let change): change.recordID.zoneID
        case .zone(let change): change.zoneID
        }
    }

    /// Which database the change goes to: a zone named with another owner is one shared with this account.
    var scope: DatabaseScope { zoneID.ownerName == RecordZone.ID.defaultOwnerName ? .private : .shared }

    /// The outbox rows whose changes go to `scope`'s database, as SQL (with the owner's name written out,
    /// so that SQLite can use the index of shared entries, `outboxShared`).
    static func scopeCondition(_ scope: DatabaseScope) -> String {
        "ownerName \(scope == .private ? "=" : "<>") '\(RecordZone.ID.defaultOwnerName)'"
    }
}

/// What one write transaction did to the outbox, for the engines to follow: zone changes, which the
/// engines track, in order, and which databases got record changes, which the outbox alone tracks (the
/// engines hear only that there are some: ``SyncKit/SyncEngine/State/hasPendingUntrackedChanges``).
public struct OutboxDelta: Sendable {
    enum Step: Sendable {
        /// The zone change was queued (or queued again).
        case queued(SyncEngine.PendingDatabaseChange)
        /// The zone's entry left the outbox: nothing of it is pending.
        case settled(SyncEngine.PendingDatabaseChange)
        /// Every entry left the outbox.
        case cleared
    }

    var steps: [Step] = []
    /// The databases that got a record change queued after the last clearing.
    var queuedRecords: Set<DatabaseScope> = []

    var isEmpty: Bool { steps.isEmpty && queuedRecords.isEmpty }

    /// The steps for one database's engine: changes in its zones, and clearing.
    func scoped(_ scope: DatabaseScope) -> OutboxDelta {
        OutboxDelta(
            steps: steps.filter { step in
                switch step {
                case .queued(let change), .settled(let change): OutboxEntry(change: .zone(change)).scope == scope
                case .cleared: true
                }
            },
            queuedRecords: queuedRecords.intersection([scope]))
    }
}

extension ContactStore {
    /// One write transaction on the store. The outbox changes only through it, and it notes each one
    /// (``OutboxDelta``), so that whoever holds an engine makes the engine's pending lists follow.
    final class Transaction {
        let db: GRDB.Database
        private(set) var delta = OutboxDelta()
        /// What the transaction could not do and the user should hear of (for the event log).
        var problems: [String] = []

        init(_ db: GRDB.Database) { self.db = db }

        /// Queues `change`, one version past any entry its item has (in one statement: an import queues
        /// every contact it reads).
        func enqueue(_ change: OutboxEntry.Change) throws {
            let entry = OutboxEntry(change: change)
            try db.cachedStatement(
                sql: """
                    INSERT INTO outbox (key, kind, version, zoneName, ownerName) VALUES (?, ?, 1, ?, ?)
                    ON CONFLICT (key) DO UPDATE SET kind = excluded.kind, version = version + 1,
                        zoneName = excluded.zoneName, ownerName = excluded.ownerName
                    """
            ).execute(arguments: [entry.key, entry.kind.rawValue, entry.zoneID.zoneName, entry.zoneID.ownerName])
            switch change {
            case .record: delta.queuedRecords.insert(entry.scope)
            case .zone(let change): delta.steps.append(.queued(change))
            }
        }

        /// Removes the entry of `change`'s item if it is still this change, at `version` or older (at any
        /// version when nil). A newer edit made meanwhile, or a delete queued after a save, stays queued.
        func settle(_ change: OutboxEntry.Change, version: Int64? = nil) throws {
            let entry = OutboxEntry(change: change)
            try db.cachedStatement(sql: "DELETE FROM outbox WHERE key = ? AND kind = ? AND version <= ?")
                .execute(arguments: [entry.key, entry.kind.rawValue, version ?? Int64.max])
            if case .zone(let change) = change, db.changesCount > 0 { delta.steps.append(.settled(change)) }
        }

        /// What the outbox holds for `recordID`'s item.
        func pendingKind(of recordID: RecordValue.ID) throws -> OutboxEntry.Kind? {
            try String.fetchOne(
                db.cachedStatement(sql: "SELECT kind FROM outbox WHERE key = ?"),
                arguments: [OutboxEntry(change: .record(.saveRecord(recordID))).key]
            ).flatMap(OutboxEntry.Kind.init(rawValue:))
        }

        /// Removes every contact, conflict, book but the default one, server record and outbox entry (the
        /// engines' states too when asked).
        func wipe(engineState: Bool) throws {
            try db.execute(
                sql: """
                    DELETE FROM serverRecord; DELETE FROM contact; DELETE FROM outbox; DELETE FROM conflict;
                    DELETE FROM knownKey;
                    DELETE FROM book WHERE NOT (zoneName = 'Contacts' AND ownerName = '__defaultOwner__');
                    DELETE FROM bookNumber WHERE n != \(ContactStore.defaultBookNumber)
                    """)
            if engineState {
                try ContactStore.setSetting(.engineState, nil, db)
                try ContactStore.setSetting(.sharedEngineState, nil, db)
            }
            delta.steps.append(.cleared)
            delta.queuedRecords = []
        }

        /// Whether the outbox holds record changes for `scope`'s database.
        func hasPendingRecords(in scope: DatabaseScope) throws -> Bool {
            try ContactStore.hasPendingRecords(in: scope, db)
        }
    }

    /// Runs `body` in one write transaction; once it commits, and before any other write, `onCommit`
    /// gets the outbox changes it made.
    ///
    /// A commit is flushed to the disk before it returns, unless it is the sync's own bookkeeping
    /// (`durable: false`: a batch settled, a page fetched, the engine's state), which waited for a
    /// flush at every batch. Such a commit survives the process being killed; a power loss may take
    /// it back, with every commit after it (the file stays consistent), and the next sync does it
    /// again: a batch sent again is answered `serverRecordChanged` and settles by the merge, as after
    /// a lost answer, and a page is fetched again from the token that went back with it. Any durable
    /// commit flushes those before it too.
    func write<T: Sendable>(
        durable: Bool = true, onCommit: (@Sendable (OutboxDelta) -> Void)? = nil,
        _ body: @Sendable (Transaction) throws -> T
    ) throws -> T {
        try queue.writeWithoutTransaction { db in
            if !durable { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
            defer { if !durable { try? db.execute(sql: "PRAGMA synchronous = FULL") } }
            var result: T?
            try db.inTransaction {
                let transaction = Transaction(db)
                result = try body(transaction)
                if let onCommit {
                    let delta = transaction.delta
                    if !delta.isEmpty { db.afterNextTransaction(onCommit: { _ in onCommit(delta) }) }
                }
                return .commit
            }
            return result!
        }
    }

    /// Every entry, in key order.
    package func outbox() throws -> [OutboxEntry] {
        try queue.read { db in try Self.outbox(db, sql: "SELECT key, kind, version, zoneName, ownerName FROM outbox") }
    }

    /// The zone changes the outbox holds (few: one per book created or deleted, each of its own zone).
    func pendingZoneChanges() throws -> [SyncEngine.PendingDatabaseChange] {
        try queue.read { db in
            try Self.outbox(
                db,
                sql: "SELECT key, kind, version, zoneName, ownerName FROM outbox WHERE key >= 'zone:' AND key < 'zone;'"
            )
            .compactMap { if case .zone(let change) = $0.change { change } else { nil } }
        }
    }

    private static func outbox(_ db: GRDB.Database, sql: String, arguments: StatementArguments = [])
        throws -> [OutboxEntry]
    {
        try Row.fetchAll(db, sql: sql + " ORDER BY key", arguments: arguments).compactMap(OutboxEntry.init(row:))
    }

    /// The record changes queued for one book.
    static func pendingRecordChanges(in zoneID: RecordZone.ID, _ db: GRDB.Database) throws
        -> [SyncEngine.PendingRecordZoneChange]
    {
        try outbox(
            db, sql: "SELECT key, kind, version, zoneName, ownerName FROM outbox WHERE zoneName = ? AND ownerName = ?",
            arguments: [zoneID.zoneName, zoneID.ownerName]
        ).compactMap { entry in
            guard case .record(let change) = entry.change else { return nil }
            return change
        }
    }

    /// Whether the outbox holds record changes for `scope`'s database.
    func hasPendingRecords(in scope: DatabaseScope) throws -> Bool {
        try queue.read { db in try Self.hasPendingRecords(in: scope, db) }
    }

    /// Whether the outbox holds record changes for `scope`'s database.
    static func hasPendingRecords(in scope: DatabaseScope, _ db: GRDB.Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM outbox WHERE key >= 'record:' AND key < 'record;'
                        AND \(OutboxEntry.scopeCondition(scope)))
                    """)) ?? false
    }
}

extension SyncEngine.State {
    /// Applies what a store transaction did to the outbox: queued zone changes become pending, settled
    /// and cleared ones stop being pending, and queued record changes say that there are some.
    /// Consecutive steps of one sort go in one call.
    func follow(_ delta: OutboxDelta) {
        var zones: [SyncEngine.PendingDatabaseChange] = []
        var adding = true
        func flush() {
            if adding { add(pendingDatabaseChanges: zones) } else { remove(pendingDatabaseChanges: zones) }
            zones.removeAll()
        }
        for step in delta.steps {
            switch step {
            case .queued(let change), .settled(let change):
                let isQueued = if case .queued = step { true } else { false }
                if isQueued != adding {
                    flush()
                    adding = isQueued
                }
                if isQueued {
                    zones.append(change)
                } else {
                    // The zone left the outbox: neither its save nor its delete is pending.
                    zones += [.saveZone(RecordZone(zoneID: change.zoneID)), .deleteZone(change.zoneID)]
                }
            case .cleared:
                flush()
                remove(pendingDatabaseChanges: pendingDatabaseChanges)
                if hasPendingUntrackedChanges { hasPendingUntrackedChanges = false }
            }
        }
        flush()
        // Set again for every new change, even when already set: that is what schedules a send.
        if !delta.queuedRecords.isEmpty { hasPendingUntrackedChanges = true }
    }
}
