import Foundation
import SyncClient
import SyncCore
import Synchronization

extension SyncEngine {
    /// What the engine keeps between launches: change tokens, pending changes and the account
    /// it last saw. Mirrors `CKSyncEngine.State`.
    ///
    /// Adding or removing pending changes is synchronous and thread-safe; the engine then emits a
    /// `stateUpdate` event for the app to persist, and (with `automaticallySync`) schedules a send.
    public final class State: Sendable {
        struct Storage: Sendable {
            var records = PendingList<Record.ID, PendingRecordZoneChange>()
            var zones = PendingList<RecordZone.ID, PendingDatabaseChange>()
            var hasPendingUntrackedChanges = false
            var zoneIDsWithUnfetchedServerChanges: Set<RecordZone.ID> = []
            var databaseToken: ServerChangeToken?
            var zoneTokens: [RecordZone.ID: ServerChangeToken] = [:]
            var lastUserRecordName: String?
            /// The fingerprint of the token last checked with the server as `lastUserRecordName`'s.
            var verifiedCredential: String?
            /// Record changes in a batch the server has not answered yet, with their generations.
            var sending: [PendingRecordZoneChange: Int] = [:]

            /// Whether a send has anything to do: record or zone changes, or changes the app tracks itself.
            var hasChangesToSend: Bool { !records.isEmpty || !zones.isEmpty || hasPendingUntrackedChanges }

            /// The first `limit` pending record changes `isIncluded` accepts, leaving out those being sent
            /// (unless the app queued them again since: that newer change waits).
            func waiting(_ limit: Int, where isIncluded: (PendingRecordZoneChange) -> Bool) -> [PendingRecordZoneChange]
            {
                if sending.isEmpty { return records.prefix(limit, where: isIncluded) }
                // A batch or two are on their way: find their slots once, rather than look up every change.
                let skipped = sending.compactMap { change, generation in
                    records.slot(of: change, key: change.recordID, generation: generation)
                }
                return records.prefix(limit, skipping: skipped.sorted(), where: isIncluded)
            }
        }

        let storage: Mutex<Storage>
        /// Called after every change of the pending lists, outside the lock.
        let onChange: Mutex<(@Sendable () -> Void)?> = Mutex(nil)
        /// Whether ``serialization`` holds the pending lists (``Configuration/serializesPendingChanges``).
        let serializesPendingChanges: Bool

        init(_ serialization: Serialization?, serializesPendingChanges: Bool = true) {
            self.serializesPendingChanges = serializesPendingChanges
            var storage = Storage()
            if let serialization {
                for change in serialization.pendingRecordZoneChanges {
                    storage.records.add(change, key: change.recordID)
                }
                for change in serialization.pendingDatabaseChanges { storage.zones.add(change, key: change.zoneID) }
                storage.hasPendingUntrackedChanges = serialization.hasPendingUntrackedChanges
                storage.zoneIDsWithUnfetchedServerChanges = Set(serialization.zoneIDsWithUnfetchedServerChanges)
                storage.databaseToken = serialization.databaseChangeToken
                for entry in serialization.zoneChangeTokens { storage.zoneTokens[entry.zoneID] = entry.token }
                storage.lastUserRecordName = serialization.lastUserRecordName
                storage.verifiedCredential = serialization.verifiedCredential
            }
            self.storage = Mutex(storage)
        }

        /// Record changes waiting to be sent, oldest first.
        ///
        /// Inside the delegate's `nextRecordZoneChangeBatch`, changes in a batch already on its way to
        /// the server are left out: the engine asks for the next batch while one is sent, and a delegate
        /// that builds its batch from this list, as CKSyncEngine apps do, then takes the changes after
        /// it. Everywhere else they count until the server has answered.
        public var pendingRecordZoneChanges: [PendingRecordZoneChange] {
            storage.withLock { storage in
                Self.leavesOutSending ? storage.waiting(.max, where: { _ in true }) : storage.records.changes
            }
        }

        /// Set while the delegate makes a batch.
        @TaskLocal static var leavesOutSending = false

        /// The first `limit` record changes waiting to be sent that `isIncluded` accepts, oldest first
        /// (inside `nextRecordZoneChangeBatch`, those already on their way left out, as in
        /// ``pendingRecordZoneChanges``).
        ///
        /// Beyond CKSyncEngine: a delegate's `nextRecordZoneChangeBatch` needs only the next batch's worth,
        /// and listing every pending change for every batch makes a large send quadratic. `isIncluded` runs
        /// with the state locked: it must not use the state.
        public func pendingRecordZoneChanges(
            first limit: Int, where isIncluded: (PendingRecordZoneChange) -> Bool = { _ in true }
        ) -> [PendingRecordZoneChange] {
            storage.withLock { storage in
                Self.leavesOutSending
                    ? storage.waiting(limit, where: isIncluded) : storage.records.prefix(limit, where: isIncluded)
            }
        }

        /// Zone changes waiting to be sent, oldest first.
        public var pendingDatabaseChanges: [PendingDatabaseChange] { storage.withLock { $0.zones.changes } }

        /// Set when the app has changes it tracks itself; the next send asks the delegate for them.
        public var hasPendingUntrackedChanges: Bool {
            get { storage.withLock { $0.hasPendingUntrackedChanges } }
            set {
                storage.withLock { $0.hasPendingUntrackedChanges = newValue }
                changed()
            }
        }

        /// Zones the server said changed that have not been fetched yet.
        public var zoneIDsWithUnfetchedServerChanges: [RecordZone.ID] {
            storage.withLock { $0.zoneIDsWithUnfetchedServerChanges.sorted() }
        }

        /// Queues record changes. Adding a change for a record that has one replaces it.
        public func add(pendingRecordZoneChanges changes: [PendingRecordZoneChange]) {
            let didChange = storage.withLock { storage in
                changes.reduce(false) { storage.records.add($1, key: $1.recordID) || $0 }
            }
            if didChange { changed() }
        }

        /// Removes record changes (exactly these; a different change for the same record stays).
        public func remove(pendingRecordZoneChanges changes: [PendingRecordZoneChange]) {
            let didChange = storage.withLock { storage in
                changes.reduce(false) { storage.records.remove($1, key: $1.recordID) || $0 }
            }
            if didChange { changed() }
        }

        /// The generations of record changes about to be sent, to settle them after the answer.
        func generations(of changes: [PendingRecordZoneChange]) -> [PendingRecordZoneChange: Int] {
            storage.withLock { storage in
                var generations: [PendingRecordZoneChange: Int] = [:]
                for change in changes {
                    generations[change] = storage.records.generation(of: change, key: change.recordID)
                }
                return generations
            }
        }

        /// Marks record changes as on their way to the server, with their generations.
        func beginSending(_ generations: [PendingRecordZoneChange: Int]) {
            storage.withLock { $0.sending.merge(generations) { _, new in new } }
        }

        /// Marks record changes as answered (settled, or pending again).
        func endSending(_ changes: some Sequence<PendingRecordZoneChange>) {
            storage.withLock { storage in
                for change in changes { storage.sending[change] = nil }
            }
        }

        /// Removes record changes that were sent, unless the app queued them again meanwhile.
        func settle(_ changes: [PendingRecordZoneChange], sentGenerations: [PendingRecordZoneChange: Int]) {
            let didChange = storage.withLock { storage in
                changes.reduce(false) {
                    storage.records.remove($1, key: $1.recordID, ifGeneration: sentGenerations[$1]) || $0
                }
            }
            if didChange { changed() }
        }

        /// Queues zone changes. Adding a change for a zone that has one replaces it.
        public func add(pendingDatabaseChanges changes: [PendingDatabaseChange]) {
            let didChange = storage.withLock { storage in
                changes.reduce(false) { storage.zones.add($1, key: $1.zoneID) || $0 }
            }
            if didChange { changed() }
        }

        /// Removes zone changes.
        public func remove(pendingDatabaseChanges changes: [PendingDatabaseChange]) {
            let didChange = storage.withLock { storage in
                changes.reduce(false) { storage.zones.remove($1, key: $1.zoneID) || $0 }
            }
            if didChange { changed() }
        }

        private func changed() {
            let callback = onChange.withLock { $0 }
            callback?()
        }

        /// The state as a value to persist.
        var serialization: Serialization {
            storage.withLock { storage in
                Serialization(
                    records: PendingSnapshot(serializesPendingChanges ? storage.records : PendingList()),
                    zones: PendingSnapshot(serializesPendingChanges ? storage.zones : PendingList()),
                    hasPendingUntrackedChanges: storage.hasPendingUntrackedChanges,
                    zoneIDsWithUnfetchedServerChanges: storage.zoneIDsWithUnfetchedServerChanges.sorted(),
                    databaseChangeToken: storage.databaseToken,
                    zoneChangeTokens: storage.zoneTokens.sorted { $0.key < $1.key }.map {
                        .init(zoneID: $0.key, token: $0.value)
                    },
                    lastUserRecordName: storage.lastUserRecordName, verifiedCredential: storage.verifiedCredential)
            }
        }

        /// Forgets tokens, pending changes and the account, as after a sign-out or an account switch.
        func reset(userRecordName: String?) {
            storage.withLock { $0 = Storage(lastUserRecordName: userRecordName) }
        }

        /// Gives the state to the account just signed in, when it belonged to none: the changes the
        /// app queued while there was no account (such as right after creating the engine) are its
        /// own and stay pending, as with CKSyncEngine; tokens from no account mean nothing and go.
        func signIn(userRecordName: String) {
            storage.withLock { storage in
                var signedIn = Storage(lastUserRecordName: userRecordName)
                signedIn.records = storage.records
                signedIn.zones = storage.zones
                signedIn.hasPendingUntrackedChanges = storage.hasPendingUntrackedChanges
                storage = signedIn
            }
        }
    }
}

extension SyncEngine.State {
    /// The state as a `Codable` value, for the app to persist with its data.
    ///
    /// Versioned and forward-compatible: a newer engine reads older serializations, and an older
    /// engine reads what it knows of a newer one and ignores the rest.
    public struct Serialization: Codable, Sendable, Hashable {
        /// A zone's change token.
        public struct ZoneToken: Codable, Sendable, Hashable {
            public var zoneID: RecordZone.ID
            public var token: ServerChangeToken
        }

        /// The format's version; 1 so far.
        public var version = 1
        public var pendingRecordZoneChanges: [SyncEngine.PendingRecordZoneChange] {
            get { records.changes }
            set { records = PendingSnapshot(newValue) }
        }
        public var pendingDatabaseChanges: [SyncEngine.PendingDatabaseChange] {
            get { zones.changes }
            set { zones = PendingSnapshot(newValue) }
        }
        private var records: PendingSnapshot<Record.ID, SyncEngine.PendingRecordZoneChange>
        private var zones: PendingSnapshot<RecordZone.ID, SyncEngine.PendingDatabaseChange>
        public var hasPendingUntrackedChanges: Bool
        public var zoneIDsWithUnfetchedServerChanges: [RecordZone.ID]
        public var databaseChangeToken: ServerChangeToken?
        public var zoneChangeTokens: [ZoneToken]
        /// The user the state belongs to; a different user at launch is an account switch.
        public var lastUserRecordName: String?
        /// The fingerprint of the token last checked as that user's (``SyncCrypto/TokenFingerprint``): a
        /// launch with the same token does not ask the server who is signed in.
        var verifiedCredential: String?

        private enum CodingKeys: String, CodingKey {
            case version, pendingRecordZoneChanges, pendingDatabaseChanges, hasPendingUntrackedChanges
            case zoneIDsWithUnfetchedServerChanges, databaseChangeToken, zoneChangeTokens, lastUserRecordName
            case verifiedCredential
        }

        init(
            pendingRecordZoneChanges: [SyncEngine.PendingRecordZoneChange],
            pendingDatabaseChanges: [SyncEngine.PendingDatabaseChange], hasPendingUntrackedChanges: Bool,
            zoneIDsWithUnfetchedServerChanges: [RecordZone.ID], databaseChangeToken: ServerChangeToken?,
            zoneChangeTokens: [ZoneToken], lastUserRecordName: String?, verifiedCredential: String? = nil
        ) {
            self.init(
                records: PendingSnapshot(pendingRecordZoneChanges), zones: PendingSnapshot(pendingDatabaseChanges),
                hasPendingUntrackedChanges: hasPendingUntrackedChanges,
                zoneIDsWithUnfetchedServerChanges: zoneIDsWithUnfetchedServerChanges,
                databaseChangeToken: databaseChangeToken, zoneChangeTokens: zoneChangeTokens,
                lastUserRecordName: lastUserRecordName, verifiedCredential: verifiedCredential)
        }

        fileprivate init(
            records: PendingSnapshot<Record.ID, SyncEngine.PendingRecordZoneChange>,
            zones: PendingSnapshot<RecordZone.ID, SyncEngine.PendingDatabaseChange>, hasPendingUntrackedChanges: Bool,
            zoneIDsWithUnfetchedServerChanges: [RecordZone.ID], databaseChangeToken: ServerChangeToken?,
            zoneChangeTokens: [ZoneToken], lastUserRecordName: String?, verifiedCredential: String?
        ) {
            self.records = records
            self.zones = zones
            self.hasPendingUntrackedChanges = hasPendingUntrackedChanges
            self.zoneIDsWithUnfetchedServerChanges = zoneIDsWithUnfetchedServerChanges
            self.databaseChangeToken = databaseChangeToken
            self.zoneChangeTokens = zoneChangeTokens
            self.lastUserRecordName = lastUserRecordName
            self.verifiedCredential = verifiedCredential
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            version = try container.decodeIfPresent(Int.self, forKey: .version) ?? 1
            records = PendingSnapshot(
                try container.decodeIfPresent(
                    [SyncEngine.PendingRecordZoneChange].self, forKey: .pendingRecordZoneChanges)
                    ?? [])
            zones = PendingSnapshot(
                try container.decodeIfPresent([SyncEngine.PendingDatabaseChange].self, forKey: .pendingDatabaseChanges)
                    ?? [])
            hasPendingUntrackedChanges =
                try container.decodeIfPresent(Bool.self, forKey: .hasPendingUntrackedChanges) ?? false
            zoneIDsWithUnfetchedServerChanges =
                try container.decodeIfPresent([RecordZone.ID].self, forKey: .zoneIDsWithUnfetchedServerChanges) ?? []
            databaseChangeToken = try container.decodeIfPresent(ServerChangeToken.self, forKey: .databaseChangeToken)
            zoneChangeTokens = try container.decodeIfPresent([ZoneToken].self, forKey: .zoneChangeTokens) ?? []
            lastUserRecordName = try container.decodeIfPresent(String.self, forKey: .lastUserRecordName)
            verifiedCredential = try container.decodeIfPresent(String.self, forKey: .verifiedCredential)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(version, forKey: .version)
            try container.encode(pendingRecordZoneChanges, forKey: .pendingRecordZoneChanges)
            try container.encode(pendingDatabaseChanges, forKey: .pendingDatabaseChanges)
            try container.encode(hasPendingUntrackedChanges, forKey: .hasPendingUntrackedChanges)
            try container.encode(zoneIDsWithUnfetchedServerChanges, forKey: .zoneIDsWithUnfetchedServerChanges)
            try container.encodeIfPresent(databaseChangeToken, forKey: .databaseChangeToken)
            try container.encode(zoneChangeTokens, forKey: .zoneChangeTokens)
            try container.encodeIfPresent(lastUserRecordName, forKey: .lastUserRecordName)
            try container.encodeIfPresent(verifiedCredential, forKey: .verifiedCredential)
        }
    }
}

/// A pending list as a serialization holds it: a copy of the engine's list (which costs nothing until
/// either changes), made an array only when it is read. A state update then costs nothing for the
/// pending changes of an app that keeps them itself and never reads them from the serialization.
private struct PendingSnapshot<Key: Hashable & Sendable, Change: Hashable & Sendable>: Sendable, Hashable {
    private var list: PendingList<Key, Change>?
    private var array: [Change] = []

    init(_ list: PendingList<Key, Change>) { self.list = list }
    init(_ array: [Change]) { self.array = array }

    var changes: [Change] { list?.changes ?? array }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.changes == rhs.changes }
    func hash(into hasher: inout Hasher) { hasher.combine(changes) }
}
