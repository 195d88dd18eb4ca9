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
struct SharedDatabaseCursor: Codable, Hashable {
    struct Position: Codable, Hashable {
        var owner: String
        var zoneName: String
        var seq: Int64

        private enum CodingKeys: String, CodingKey {
            case owner = "o"
            case zoneName = "z"
            case seq = "s"
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
        positions = zones.map { Position(owner: $0.owner, zoneName: $0.zoneName, seq: $0.changeSeq) }
    }

    var token: ServerChangeToken { ServerChangeToken(position: self) }

    /// Reads a token a client sent to the shared database of `user`.
    init(token: ServerChangeToken, user: String) throws {
        guard let cursor = try? JSONDecoder().decode(Self.self, from: token.data), cursor.version == 1,
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

    /// The zones changed or deleted since this cursor, given the zones shared now.
    func changes(now zones: [SharedZone]) -> (modified: [RecordZone.ID], deleted: [RecordZone.ID]) {
        var seen: [RecordZone.ID: Int64] = [:]
        for position in positions {
            seen[RecordZone.ID(zoneName: position.zoneName, ownerName: position.owner)] = position.seq
        }
        let modified = zones.filter { seen[$0.zoneID] != $0.changeSeq }.map(\.zoneID)
        let current = Set(zones.map(\.zoneID))
        let deleted = seen.keys.filter { !current.contains($0) }.sorted()
        return (modified, deleted)
    }
}
