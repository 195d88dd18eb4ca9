import Foundation
import SyncCore

/// What a shared database's change token means: each zone the user could see at the last fetch,
/// and how far into its owner's history it had changed.
///
/// A shared database gathers zones of several owners, each with its own history, so its token
/// holds one position per zone; the zones a user can see are few (one per share they accepted).
/// A fetch compares them with the zones shared now: a zone not seen before or changed since is
/// modified; a zone seen before and no longer shared (the user left or was removed, the share or
/// the zone was deleted) is deleted.
///
/// A zone seen through record-hierarchy shares also notes their roots. When the user lost one of
/// them but still sees others of the zone, the zone is answered as deleted, and as new on the next
/// page: their device drops what it had of the zone and fetches what they see now, and learns
/// nothing of what they no longer see. (The token is the client's: whatever it says, the answer
/// only ever shows what the user sees now.)
struct SharedDatabaseCursor: Codable, Hashable {
    struct Position: Codable, Hashable {
        var owner: String
        var zoneName: String
        var seq: Int64
        /// The roots of the hierarchies seen; nil for the whole zone.
        var roots: [String]?

        private enum CodingKeys: String, CodingKey {
            case owner = "o"
            case zoneName = "z"
            case seq = "s"
            case roots = "r"
        }
    }

    private enum CodingKeys: String, CodingKey {
        case version = "v"
        case kind = "k"
        case user = "u"
        case positions = "p"
    }

    var version = 1
    var kind = "sdb"
    var user: String
    var positions: [Position]

    init(user: String, zones: [SharedZone]) {
        self.user = user
        positions = zones.map {
            Position(owner: $0.owner, zoneName: $0.zoneName, seq: $0.changeSeq, roots: $0.visibleRoots?.sorted())
        }
    }

    /// Reads the content of a token a client sent to the shared database of `user` (its signature
    /// verified by ``ChangeTokenSigner``).
    init(content: Data, user: String) throws {
        guard let cursor = try? JSONDecoder().decode(Self.self, from: content), cursor.version == 1,
            cursor.kind == "sdb"
        else {
            throw SyncError(
                .invalidArguments,
                "the change token is not one of this server's shared-database tokens; fetch again without a token to start over"
            )
        }
        guard cursor.user == user else {
            throw SyncError(
                .invalidArguments,
                "the change token belongs to another user's shared database; use the token from your last fetch")
        }
        self = cursor
    }

    /// The zones changed or deleted since this cursor, given the zones shared now. `restarted` are
    /// zones still shared whose user lost part of what they saw: answered as deleted now, and left
    /// out of the next cursor so that the next page answers them as new.
    func changes(now zones: [SharedZone]) -> (
        modified: [RecordZone.ID], deleted: [RecordZone.ID], restarted: Set<RecordZone.ID>
    ) {
        var seen: [RecordZone.ID: Position] = [:]
        for position in positions {
            seen[RecordZone.ID(zoneName: position.zoneName, ownerName: position.owner)] = position
        }
        var modified: [RecordZone.ID] = []
        var restarted = Set<RecordZone.ID>()
        for zone in zones {
            guard let position = seen[zone.zoneID] else {
                modified.append(zone.zoneID)
                continue
            }
            // Whole before, and record by record now; or a hierarchy gone.
            let before = position.roots.map(Set.init)
            if let now = zone.visibleRoots, before.map({ !$0.isSubset(of: now) }) ?? true {
                restarted.insert(zone.zoneID)
            } else if position.seq != zone.changeSeq || before != zone.visibleRoots {
                modified.append(zone.zoneID)
            }
        }
        let current = Set(zones.map(\.zoneID))
        let deleted = (seen.keys.filter { !current.contains($0) } + restarted).sorted()
        return (modified, deleted, restarted)
    }
}
