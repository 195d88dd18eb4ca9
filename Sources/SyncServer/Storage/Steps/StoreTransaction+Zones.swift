import Foundation
import SyncCore

/// Saving and deleting zones, once for every backend.
extension RecordStoreBackend {
    public func modifyZones(owner: String, saves: [StoredZone], deletes: [String], now: Date) async throws
        -> ZoneModificationOutcome
    {
        // A zone made again must start empty: what its deleted namesake left goes first, in chunks.
        try await purgeDeletedZones(owner: owner, zoneNames: saves.map(\.zoneName))
        return try await write { transaction in
            try await transaction.modifyZones(owner: owner, saves: saves, deletes: deletes, now: now)
        }
    }

    public func resetEncryptedData(owner: String, now: Date) async throws -> [String] {
        try await write { transaction in
            var seq = try await transaction.lockAccount(owner: owner).current
            try await transaction.deleteEncryptionSettings(owner: owner)
            let names = try await transaction.encryptedZoneNames(owner: owner)
            for name in names {
                seq += 1
                try await transaction.deleteZone(
                    owner: owner, zoneName: name, reason: .encryptedDataReset, seq: seq, now: now)
            }
            try await transaction.setChangeSeq(owner: owner, seq: seq)
            return names
        }
    }
}

extension StoreTransaction {
    func modifyZones(owner: String, saves: [StoredZone], deletes: [String], now: Date) async throws
        -> ZoneModificationOutcome
    {
        let at = now.millisecondsSince1970
        var seq = try await lockAccount(owner: owner).current
        var outcome = ZoneModificationOutcome(saved: [], created: [], keyed: [], deleted: [], missing: [])
        for save in saves {
            let name = save.zoneName
            switch ZoneSave.decide(stored: try await liveZone(owner: owner, zoneName: name), save: save) {
            case .keep(let zone):
                outcome.saved.append(zone)
            case .addKey(let key):
                seq += 1
                try await setZoneKey(owner: owner, zoneName: name, key: key, seq: seq, at: at)
                outcome.keyed.append(name)
                outcome.saved.append(save)
            case .create:
                seq += 1
                // Anything left of a deleted zone of this name (a purge is not done yet) goes now.
                _ = try await purgeChunk(owner: owner, zoneName: name, limit: nil)
                try await createZone(owner: owner, zone: save, incarnation: UUID().uuidString, seq: seq, at: at)
                outcome.created.append(name)
                outcome.saved.append(save)
            }
        }
        for name in deletes {
            guard try await zoneIsLive(owner: owner, zoneName: name) else {
                outcome.missing.append(name)
                continue
            }
            seq += 1
            try await deleteZone(owner: owner, zoneName: name, reason: .deleted, seq: seq, now: now)
            outcome.deleted.append(name)
        }
        try await setChangeSeq(owner: owner, seq: seq)
        return outcome
    }

    /// Turns a live zone into a tombstone that remembers why it went; its key goes with it, and its
    /// usage leaves the owner's at once. Its records are unreachable from now on; they are removed in
    /// chunks afterwards (``RecordStoreBackend/purgeDeletedZones(owner:zoneNames:)``), so that deleting
    /// a large zone is not one long transaction (on SQLite, one that holds every account's writes).
    func deleteZone(owner: String, zoneName: String, reason: ZoneDeletionReason, seq: Int64, now: Date) async throws {
        try await uncountZone(owner: owner, zoneName: zoneName)
        try await deleteMembershipChanges(owner: owner, zoneName: zoneName)
        // Its references name nothing from now on (a zone made again under its name starts without them).
        try await deleteReferences(owner: owner, zoneName: zoneName)
        // Its share goes with it: the participants see the zone leave their shared databases.
        try await deleteShareRows(owner: owner, zoneName: zoneName, recordName: nil)
        try await markZoneDeleted(
            owner: owner, zoneName: zoneName, reason: reason, seq: seq, at: now.millisecondsSince1970)
    }
}
