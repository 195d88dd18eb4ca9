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
/// (save A, save B, save A → save A, save B). Adding, removing and looking up one change is O(1);
/// listing them is O(n) with no sorting, so an app that reads the list once per batch stays linear.
///
/// Each entry carries a generation that every add bumps, so that a change re-added while its
/// earlier version was being sent is not removed when that send succeeds (the newer edit would be
/// lost otherwise; CKSyncEngine apps have to guard against this themselves).
struct PendingList<Key: Hashable & Sendable, Change: Hashable & Sendable>: Sendable {
    /// Where each key's change sits in `slots`, and its generation.
    private var entries: [Key: (slot: Int, generation: Int)] = [:]
    /// The changes in the order they were added; nil where one was removed or replaced.
    private var slots: [Change?] = []
    private var nextGeneration = 0

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The changes in the order they were added.
    var changes: [Change] { slots.compactMap { $0 } }

    /// The first `limit` changes that `isIncluded` accepts, in the order they were added.
    func prefix(_ limit: Int, where isIncluded: (Change) -> Bool) -> [Change] {
        var found: [Change] = []
        for case let change? in slots where isIncluded(change) {
            if found.count == limit { break }
            found.append(change)
        }
        return found
    }

    /// As ``prefix(_:where:)``, leaving out the changes in the slots `skipped` (ascending, from
    /// ``slot(of:key:generation:)``): no hashing per change, so a long list is cheap to walk.
    func prefix(_ limit: Int, skipping skipped: [Int], where isIncluded: (Change) -> Bool) -> [Change] {
        var found: [Change] = []
        var next = 0
        for (slot, change) in slots.enumerated() {
            guard let change else { continue }
            while next < skipped.count && skipped[next] < slot { next += 1 }
            if next < skipped.count && skipped[next] == slot { continue }
            guard isIncluded(change) else { continue }
            if found.count == limit { break }
            found.append(change)
        }
        return found
    }

    /// Where this change sits, if it is pending at exactly `generation`.
    func slot(of change: Change, key: Key, generation: Int) -> Int? {
        guard let entry = entries[key], entry.generation == generation, slots[entry.slot] == change else { return nil }
        return entry.slot
    }

    /// Adds a change; returns whether the list changed (a repeated change counts: it is newer).
    @discardableResult
    mutating func add(_ change: Change, key: Key) -> Bool {
        nextGeneration += 1
        if let existing = entries[key] {
            if slots[existing.slot] == change {
                entries[key]?.generation = nextGeneration
                return true
            }
            vacate(existing.slot)
        }
        entries[key] = (slots.count, nextGeneration)
        slots.append(change)
        return true
    }

    /// Removes exactly this change; returns whether it was there.
    @discardableResult
    mutating func remove(_ change: Change, key: Key) -> Bool {
        guard let entry = entries[key], slots[entry.slot] == change else { return false }
        entries[key] = nil
        vacate(entry.slot)
        return true
    }

    /// The generation of this change, if it is pending.
    func generation(of change: Change, key: Key) -> Int? {
        guard let entry = entries[key], slots[entry.slot] == change else { return nil }
        return entry.generation
    }

    /// Removes this change only if it was not added again since `generation`.
    @discardableResult
    mutating func remove(_ change: Change, key: Key, ifGeneration generation: Int?) -> Bool {
        guard let entry = entries[key], slots[entry.slot] == change, entry.generation == generation else {
            return false
        }
        entries[key] = nil
        vacate(entry.slot)
        return true
    }

    func contains(_ change: Change, key: Key) -> Bool {
        guard let entry = entries[key] else { return false }
        return slots[entry.slot] == change
    }

    mutating func removeAll() {
        entries = [:]
        slots = []
    }

    /// Empties a slot; once more than half the slots are empty, closes the gaps (amortised O(1)).
    private mutating func vacate(_ slot: Int) {
        slots[slot] = nil
        guard slots.count > 64, entries.count < slots.count / 2 else { return }
        var compacted: [Change?] = []
        compacted.reserveCapacity(entries.count)
        // Where each occupied slot moves to, by its old index.
        var moved = [Int](repeating: 0, count: slots.count)
        for (old, change) in slots.enumerated() where change != nil {
            moved[old] = compacted.count
            compacted.append(change)
        }
        // In place: no rehashing, and no second table (at 100,000 pending changes, 17 MB at the send's peak).
        var index = entries.values.startIndex
        while index != entries.values.endIndex {
            entries.values[index].slot = moved[entries.values[index].slot]
            entries.values.formIndex(after: &index)
        }
        slots = compacted
    }
}
