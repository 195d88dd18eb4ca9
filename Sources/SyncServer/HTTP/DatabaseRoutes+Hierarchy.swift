import Foundation
import Hummingbird
import SyncCore

/// A participant's fetch of a zone they see through record-hierarchy shares: the zone's history,
/// filtered to their hierarchies (``SharedHierarchyView``), with the records that joined or left
/// them from the membership log.
extension DatabaseRoutes {
    func hierarchyChangesResponse(
        owner: String, fetch: FetchZoneChangesRequest, visibleRoots: Set<String>, limit: Int
    ) async throws -> Response {
        let zoneName = fetch.zoneID.zoneName
        let cursor = try fetch.since.map {
            try ChangeCursor(token: $0, expecting: .zone, owner: owner, scope: .private, zoneName: zoneName)
        }
        let seen = cursor.map { Set($0.roots ?? []) }
        if let cursor, let seen, cursor.roots == nil || !visibleRoots.isSubset(of: seen) {
            // Records shared with them since were never sent; their last fetch cannot say which.
            throw SyncError(
                .changeTokenExpired,
                "zone '\(zoneName)' shares more records with you than when this token was made; fetch it again without a token"
            )
        }
        let page = try await store.zoneChanges(
            owner: owner, zoneName: zoneName, since: cursor, limit: limit, excludingWriter: fetch.excludingWriter)
        // The rows and the membership log, up to where both are complete.
        let moves = try await store.membershipChanges(
            owner: owner, zoneName: zoneName, after: cursor?.seq ?? 0, limit: limit + 1)
        var upper = page.cursor.seq
        if moves.count > limit { upper = min(upper, moves[limit - 1].seq) }
        let moreComing = page.moreComing || upper < page.cursor.seq
        // Hierarchies they no longer see (a share deleted or left while another of the zone stays):
        // their records go, and stay in the token's roots as such until the last page.
        let lost = (seen ?? []).subtracting(visibleRoots)
        let view = SharedHierarchyView(visibleRoots: visibleRoots, formerRoots: lost)
        var changes = view.changes(
            rows: page.rows.filter { $0.seq <= upper }, moves: moves.filter { $0.seq <= upper })
        if !changes.joined.isEmpty {
            let keys = changes.joined.map { RecordKey(zoneName: zoneName, recordName: $0) }
            for case .found(let row) in try await store.lookupRecords(owner: owner, keys: keys).items
            where view.shows(row) {
                changes.modified.append(row)
            }
        }
        for record in try await store.records(owner: owner, zoneName: zoneName, inHierarchiesOf: lost) {
            changes.deleted.append((record.key.recordName, record.recordType))
        }
        var next = page.cursor
        next.seq = upper
        next.roots = (moreComing ? visibleRoots.union(lost) : visibleRoots).sorted()
        let answer = ZoneChangePage(
            modifications: changes.modified, deletions: changes.deleted, cursor: next, moreComing: moreComing)
        return zoneChangesResponse(answer, in: fetch.zoneID)
    }
}
