import SyncCore

/// The change tags of the records an engine saved, kept until a fetch brings them back.
///
/// A fetched record with the tag this engine saved is its own change: the app had it, with the same
/// fields, in `sentRecordZoneChanges`. It is left out of `fetchedRecordZoneChanges`, which reports the
/// changes other devices made, so a large upload is not opened and merged a second time when the
/// next fetch passes over it. Held in memory only: a new engine (a relaunch, wiped local data) is
/// told everything again.
struct RecentSaves: Sendable {
    /// Past this many records unfetched (saves with no fetch in between), the oldest are forgotten
    /// and come back in a fetch as before.
    static let limit = 100_000

    private var tags: [RecordValue.ID: String] = [:]

    mutating func saved(_ records: [RecordValue]) {
        if tags.count + records.count > Self.limit { tags.removeAll() }
        for record in records {
            if let tag = record.recordChangeTag { tags[record.recordID] = tag }
        }
    }

    /// Whether `record` is exactly a version this engine saved; either way, its entry is done with.
    mutating func isOwn(_ record: RecordValue) -> Bool {
        guard let tag = tags.removeValue(forKey: record.recordID) else { return false }
        return tag == record.recordChangeTag
    }

    mutating func forget(_ recordIDs: [RecordValue.ID]) {
        for id in recordIDs { tags.removeValue(forKey: id) }
    }
}
