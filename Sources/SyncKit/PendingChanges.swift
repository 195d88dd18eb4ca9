import SyncClient
import SyncCore

extension SyncEngine {
    /// A record change waiting to be sent. Mirrors `CKSyncEngine.PendingRecordZoneChange`.
    public enum PendingRecordZoneChange: Hashable, Sendable, Codable {
        case saveRecord(Record.ID)
        case deleteRecord(Record.ID)

        /// The record the change is about.
        public var recordID: Record.ID {
            switch self {
            case .saveRecord(let id), .deleteRecord(let id): id
            }
        }
    }

    /// A zone change waiting to be sent. Mirrors `CKSyncEngine.PendingDatabaseChange`.
    public enum PendingDatabaseChange: Hashable, Sendable, Codable {
        case saveZone(RecordZone)
        case deleteZone(RecordZone.ID)

        /// The zone the change is about.
        public var zoneID: RecordZone.ID {
            switch self {
            case .saveZone(let zone): zone.zoneID
            case .deleteZone(let id): id
            }
        }
    }
}

/// An insertion-ordered set of changes keyed by what they change: adding a change for a key that
/// has one replaces it (save then delete → delete), adding the same change again keeps its place
/// (save A, save B, save A → save A, save B). Lookups and removals are O(1).
///
/// Each entry carries a generation that every add bumps, so that a change re-added while its
/// earlier version was being sent is not removed when that send succeeds (the newer edit would be
/// lost otherwise; CKSyncEngine apps have to guard against this themselves).
struct PendingList<Key: Hashable & Sendable, Change: Hashable & Sendable>: Sendable {
    private var entries: [Key: (order: Int, generation: Int, change: Change)] = [:]
    private var nextOrder = 0
    private var nextGeneration = 0

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The changes in the order they were added.
    var changes: [Change] {
        entries.values.sorted { $0.order < $1.order }.map(\.change)
    }

    /// Adds a change; returns whether the list changed (a repeated change counts: it is newer).
    @discardableResult
    mutating func add(_ change: Change, key: Key) -> Bool {
        nextGeneration += 1
        if let existing = entries[key], existing.change == change {
            entries[key]?.generation = nextGeneration
            return true
        }
        entries[key] = (nextOrder, nextGeneration, change)
        nextOrder += 1
        return true
    }

    /// Removes exactly this change; returns whether it was there.
    @discardableResult
    mutating func remove(_ change: Change, key: Key) -> Bool {
        guard entries[key]?.change == change else { return false }
        entries[key] = nil
        return true
    }

    /// The generation of this change, if it is pending.
    func generation(of change: Change, key: Key) -> Int? {
        guard let entry = entries[key], entry.change == change else { return nil }
        return entry.generation
    }

    /// Removes this change only if it was not added again since `generation`.
    @discardableResult
    mutating func remove(_ change: Change, key: Key, ifGeneration generation: Int?) -> Bool {
        guard let entry = entries[key], entry.change == change, entry.generation == generation else { return false }
        entries[key] = nil
        return true
    }

    func contains(_ change: Change, key: Key) -> Bool {
        entries[key]?.change == change
    }

    mutating func removeAll() {
        entries = [:]
    }
}
