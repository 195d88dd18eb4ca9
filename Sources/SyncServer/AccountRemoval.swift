import Foundation
import SyncCore

/// Deletes an account and everything it owns, through the same paths a person's own actions take,
/// so that everyone who saw its data is told as they would be then:
///
/// 1. its places in others' shares are left, as leaving from the shared database does (each
///    owner's devices hear the share changed);
/// 2. its zones are deleted, as a zone deletion does: their shares go with them, so the
///    participants fetch the zone's deletion from their shared database, and are pushed;
/// 3. the account's row goes, with every row it still owns, its encryption settings and sessions;
///    the sessions' tokens answer `accountDeleted` from then on, and their push sockets close.
///
/// Each step is its own transaction: if the server stops midway, the account is still there,
/// signed in, and deleting it again finishes the work.
public struct AccountRemoval: Sendable {
    let store: any RecordStore
    let pushHub: PushHub

    /// - Parameter pushHub: the hub whose sockets (and, through its fan-out, other instances'
    ///   sockets) hear of the deletion.
    public init(store: any RecordStore, pushHub: PushHub) {
        self.store = store
        self.pushHub = pushHub
    }

    /// What a removal did.
    public struct Outcome: Sendable, Hashable {
        /// The account's zones that were deleted.
        public var zonesDeleted: Int
        /// The others' shares it left.
        public var sharesLeft: Int
        /// The sessions that ended.
        public var sessionsEnded: Int
    }

    /// Removes the account whose user record name is `user`.
    @discardableResult
    public func remove(userRecordName user: String, now: Date) async throws -> Outcome {
        var leftZones: [String: Set<String>] = [:]
        var sharesLeft = 0
        for share in try await store.memberships(user: user) {
            do {
                _ = try await store.updateShare(token: share.token, actor: user, now: now) {
                    try ShareRules.left($0, by: user)
                }
            } catch let error as SyncError where error.code == .unknownItem {
                continue  // The share went, or the account left it, meanwhile.
            }
            sharesLeft += 1
            leftZones[share.owner, default: []].insert(share.zoneName)
        }

        let zoneNames = try await store.zones(owner: user).map(\.zoneName)
        let audience = try await store.audience(owner: user, zoneNames: Set(zoneNames))
        if !zoneNames.isEmpty {
            _ = try await store.modifyZones(owner: user, saves: [], deletes: zoneNames, now: now)
        }

        let ended = try await store.deleteAccount(userRecordName: user, at: now)
        for tokenHash in ended { await pushHub.closeSession(tokenHash) }
        let zones = ZoneAudience(store: store, pushHub: pushHub)
        for (owner, names) in leftZones.sorted(by: { $0.key < $1.key }) {
            await zones.notify(owner: owner, zoneNames: names, by: user, device: nil)
        }
        for participant in audience.sorted() {
            await pushHub.notify(user: participant, scope: .shared, excludingDevice: nil)
        }
        return Outcome(zonesDeleted: zoneNames.count, sharesLeft: sharesLeft, sessionsEnded: ended.count)
    }
}
