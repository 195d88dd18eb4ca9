import Foundation
import Hummingbird
import SyncCore

/// A participant's fetch of a zone they see through record-hierarchy shares: the zone's history,
/// filtered to their hierarchies (``SharedHierarchyView``), with the records that joined or left
/// them from the membership log.
///
/// A token is good for the hierarchies it was made for: with others (one gained, one lost), it has
/// expired, and the fetch starts again from the beginning. (A lost hierarchy reaches the device
/// first as the zone's deletion from the shared database; see ``SharedDatabaseCursor``.) A fetch
/// from the beginning, in all its pages, holds the records seen now and no deletion from before it
/// began: a new device has nothing to delete, and nothing it never saw is named to it.
extension DatabaseRoutes {
    func hierarchyChangesResponse(
        owner: String, fetch: FetchZoneChangesRequest, visibleRoots: Set<String>, limit: Int
    ) async throws -> Response {
        let zoneName = fetch.zoneID.zoneName
        let cursor = try await cursor(
            from: fetch.since, expecting: .zone, owner: owner, scope: .private, zoneName: zoneName)
        if let cursor, cursor.roots.map(Set.init) != visibleRoots {
            throw SyncError(
                .changeTokenExpired,
                "zone '\(zoneName)' shares other records with you than when this token was made; fetch it again without a token"
            )
        }
        let view = SharedHierarchyView(visibleRoots: visibleRoots)
        var page: ZoneChangePage
        var changes: SharedHierarchyView.Changes
        var upper: Int64
        if let cursor {
            // The rows and the membership log, up to where both are complete.
            let read = try await store.zoneChangesAndMoves(
                owner: owner, zoneName: zoneName, since: cursor, limit: limit, excludingWriter: fetch.excludingWriter)
            page = read.page
            upper = page.cursor.seq
            if read.moves.count > limit { upper = min(upper, read.moves[limit - 1].seq) }
            changes = view.changes(
                rows: page.rows.filter { $0.seq <= upper }, moves: read.moves.filter { $0.seq <= upper },
                quietThrough: cursor.baseline ?? 0)
        } else {
            page = try await store.zoneChanges(
                owner: owner, zoneName: zoneName, since: nil, limit: limit, excludingWriter: fetch.excludingWriter)
            upper = page.cursor.seq
            changes = view.changes(rows: page.rows, moves: [], quietThrough: page.currentSeq)
        }
        let baseline = cursor.map { $0.baseline } ?? page.currentSeq
        if !changes.joined.isEmpty {
            let keys = changes.joined.map { RecordKey(zoneName: zoneName, recordName: $0) }
            for case .found(let row) in try await store.lookupRecords(owner: owner, keys: keys).items
            where view.shows(row) {
                changes.modified.append(row)
            }
        }
        var next = page.cursor
        next.seq = upper
        next.roots = visibleRoots.sorted()
        next.baseline = baseline.flatMap { upper < $0 ? $0 : nil }
        let answer = ZoneChangePage(
            modifications: changes.modified.map(RecordHierarchy.seenByParticipant), deletions: changes.deleted,
            cursor: next, moreComing: page.moreComing || upper < page.cursor.seq)
        return try await zoneChangesResponse(answer, in: fetch.zoneID, desiredKeys: fetch.desiredKeys)
    }
}
