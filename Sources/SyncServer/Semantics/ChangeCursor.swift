import Foundation
import SyncCore

/// What a server change token means: how far into one owner's database, or one incarnation of
/// one zone, a client has read. Clients only ever see it encoded as an opaque ``ServerChangeToken``,
/// signed by ``ChangeTokenSigner``: a client cannot make one up or change one.
public struct ChangeCursor: Codable, Sendable, Hashable {
    /// A database token or a zone token.
    public enum Kind: String, Codable, Sendable {
        case database = "db"
        case zone = "z"
    }

    private enum CodingKeys: String, CodingKey {
        case version = "v"
        case kind = "k"
        case owner = "o"
        case scope = "d"
        case zoneName = "z"
        case incarnation = "i"
        case seq = "s"
        case roots = "r"
        case baseline = "b"
    }

    var version = 1
    public var kind: Kind
    public var owner: String
    public var scope: DatabaseScope
    /// For zone tokens: the zone's name and incarnation (a zone deleted and created again is a new incarnation).
    public var zoneName: String?
    public var incarnation: String?
    /// The owner's change sequence number the client has read up to, inclusive.
    public var seq: Int64
    /// For a participant's zone token: the roots of the record-hierarchy shares it covers (nil for
    /// a whole zone).
    public var roots: [String]?
    /// For a participant's zone token in the pages of a fetch begun without a token: the owner's
    /// change number when it began. History up to it is not replayed as deletions: they had none of it.
    public var baseline: Int64?

    public static func database(owner: String, scope: DatabaseScope, seq: Int64) -> ChangeCursor {
        ChangeCursor(kind: .database, owner: owner, scope: scope, zoneName: nil, incarnation: nil, seq: seq)
    }

    public static func zone(owner: String, zoneName: String, incarnation: String, seq: Int64) -> ChangeCursor {
        ChangeCursor(kind: .zone, owner: owner, scope: .private, zoneName: zoneName, incarnation: incarnation, seq: seq)
    }

    init(
        kind: Kind, owner: String, scope: DatabaseScope, zoneName: String?, incarnation: String?, seq: Int64,
        roots: [String]? = nil
    ) {
        self.kind = kind
        self.owner = owner
        self.scope = scope
        self.zoneName = zoneName
        self.incarnation = incarnation
        self.seq = seq
        self.roots = roots
    }

    /// Reads the content of a token a client sent (its signature verified by ``ChangeTokenSigner``)
    /// and checks that it belongs where the client used it.
    ///
    /// - Throws: `invalidArguments` when the token is not one of ours or belongs to another
    ///   database, zone or user.
    init(content: Data, expecting kind: Kind, owner: String, scope: DatabaseScope, zoneName: String?) throws {
        guard let cursor = try? JSONDecoder().decode(ChangeCursor.self, from: content), cursor.version == 1 else {
            throw SyncError(
                .invalidArguments,
                "the change token is not one this server issued; fetch again without a token to start over")
        }
        guard cursor.kind == kind, cursor.owner == owner, cursor.scope == scope else {
            throw SyncError(
                .invalidArguments,
                "the change token belongs to another database or user; use the token from this database's last fetch")
        }
        if kind == .zone, cursor.zoneName != zoneName {
            throw SyncError(
                .invalidArguments,
                "the change token belongs to zone '\(cursor.zoneName ?? "")', not '\(zoneName ?? "")'")
        }
        self = cursor
    }

    /// Throws `changeTokenExpired` unless the history since this cursor is still complete.
    ///
    /// - Parameters:
    ///   - compactedSeq: changes up to this number may have been forgotten.
    ///   - currentSeq: the newest change number; a cursor beyond it comes from another server's history.
    ///   - incarnation: for zone cursors, the zone's current incarnation.
    public func checkCurrent(compactedSeq: Int64, currentSeq: Int64, incarnation: String? = nil) throws {
        if let incarnation, self.incarnation != incarnation {
            throw SyncError(
                .changeTokenExpired,
                "zone '\(zoneName ?? "")' was deleted and created again since this token; fetch it again without a token"
            )
        }
        if seq < compactedSeq {
            throw SyncError(
                .changeTokenExpired,
                "the change token is older than the server's kept history; fetch again without a token")
        }
        if seq > currentSeq {
            throw SyncError(
                .changeTokenExpired,
                "the change token is newer than this server's history (was the server restored from a backup?); fetch again without a token"
            )
        }
    }
}
