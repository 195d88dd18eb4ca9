import Foundation
import SyncCore

/// What a backend reads and writes inside one transaction: each requirement is one statement (or a
/// few that belong together) in the backend's SQL, and nothing more.
///
/// The order of those statements, and every decision between them, is written once, in this folder's
/// extensions of this protocol (`StoreTransaction+Zones.swift`, `+Records.swift`, …), over any backend;
/// the decisions themselves live in `Semantics/`. A backend runs them in its own transaction
/// (``RecordStoreBackend/write(_:)``): SQLite's writer, or PostgreSQL's transaction under the owner's
/// account lock.
protocol StoreTransaction {
    // MARK: The account's counters

    /// Reads the owner's change counters and, where writers of one account can run at once, holds
    /// the owner's lock until the transaction ends: every later read sees what the writers before
    /// this one committed.
    func lockAccount(owner: String) async throws -> (current: Int64, compacted: Int64)
    func setChangeSeq(owner: String, seq: Int64) async throws
    /// The owner's stored bytes and own quota (nil: the server's default).
    func usage(owner: String) async throws -> (usedBytes: Int64, quotaBytes: Int64?)

    // MARK: Accounts and sessions

    /// Moves the user's live sessions (the one `id` names, or all; none `sparing` names) into
    /// `ended_session` with `reason`; their token hashes.
    func endSessions(user: String, id: String?, sparing: String?, reason: SyncError.Reason, at: Int64) async throws
        -> [String]
    func setPasswordHash(_ hash: String, user: String) async throws
    /// Deletes everything the account owns and its row (sessions and settings go with it); its assets
    /// are left detached, for the next collection.
    func deleteAccountRows(owner: String) async throws
    /// The shares the user is a participant of (not removed), by owner, zone and name.
    func membershipPlaces(user: String) async throws -> [(owner: String, zoneName: String, recordName: String)]

    // MARK: Encryption

    /// The account's settings; held until the transaction ends when `forUpdate`.
    func encryptionSettings(owner: String, forUpdate: Bool) async throws -> AccountEncryptionSettings?
    /// Stores the settings unless the account has some: whether it stored them.
    func insertEncryptionSettings(_ settings: AccountEncryptionSettings, owner: String, at: Int64) async throws
        -> Bool
    func setKeyPair(_ keyPair: AccountKeyPair, owner: String) async throws
    /// Writes every field of the settings, key pair included, over the stored ones (not the recovery key).
    func replaceEncryptionSettings(_ settings: AccountEncryptionSettings, owner: String) async throws
    /// The account's recovery key, sealed account key and verifier hash included; nil when it has none.
    func recovery(owner: String) async throws -> StoredRecovery?
    /// Stores the account's recovery key over the one it had (the settings' row must exist).
    func setRecovery(_ recovery: StoredRecovery, owner: String) async throws
    /// The keys of the owner's live zones that have one, by zone name.
    func zoneKeys(owner: String) async throws -> [String: RecordZone.EncryptionKey]
    func setZoneWrappedKey(_ wrappedKey: Data, owner: String, zoneName: String, seq: Int64, at: Int64) async throws
    /// The user's own key slots in live zones shared with it (accepted, not as owner): a zone and key
    /// version per share (a zone's hierarchies may each have one).
    func sharedSlots(user: String) async throws -> [(zoneID: RecordZone.ID, keyVersion: Int)]
    /// Rewraps the user's slot in a shared zone.
    func setSharedSlotKey(_ key: RecordZone.EncryptionKey, user: String, zoneID: RecordZone.ID) async throws

    // MARK: Zones

    func zoneIsLive(owner: String, zoneName: String) async throws -> Bool
    /// The zone, when it is live.
    func liveZone(owner: String, zoneName: String) async throws -> StoredZone?
    func deleteEncryptionSettings(owner: String) async throws
    /// The names of the owner's live zones that have a key, in byte order.
    func encryptedZoneNames(owner: String) async throws -> [String]
    func setZoneKey(owner: String, zoneName: String, key: RecordZone.EncryptionKey, seq: Int64, at: Int64)
        async throws
    /// Writes a zone afresh (replacing a deleted namesake's row), empty and counting nothing.
    func createZone(owner: String, zone: StoredZone, incarnation: String, seq: Int64, at: Int64) async throws
    /// Makes the zone a tombstone that remembers why it went, without its key.
    func markZoneDeleted(owner: String, zoneName: String, reason: ZoneDeletionReason, seq: Int64, at: Int64)
        async throws
    func setZoneChangeSeq(owner: String, zoneName: String, seq: Int64, at: Int64) async throws
    /// Deleted zones that still have record rows: of `owner` (every account's for nil).
    func deletedZonesWithRecords(owner: String?) async throws -> [(owner: String, zoneName: String)]
    /// Removes up to `limit` record rows of a zone (every one for nil), the first in change order from
    /// `fromSeq` on: how many went, and the last one's change number (`fromSeq` for none).
    func deleteRecordRows(owner: String, zoneName: String, fromSeq: Int64, limit: Int?) async throws -> (
        count: Int, lastSeq: Int64
    )

    // MARK: Usage

    /// The stored size of the fields of those of `keys` that have a row.
    func storedSizes(owner: String, keys: [RecordKey]) async throws -> [RecordKey: Int64]
    func addUsage(owner: String, zoneName: String, bytes: Int64) async throws
    func addUsage(owner: String, bytes: Int64) async throws
    /// Takes the zone's counted bytes off its owner's and sets the zone's to zero.
    func uncountZone(owner: String, zoneName: String) async throws

    // MARK: Changes

    /// The owner's live zones, in byte order of their names, with their keys.
    func liveZones(owner: String) async throws -> [StoredZone]
    /// The owner's zones changed after `since` (a page of `limit`, and one more to tell whether more
    /// follow), with the account's counters checked against `since`.
    func databaseChanges(owner: String, since: ChangeCursor?, limit: Int) async throws -> DatabaseChangePage
    /// A page of the zone's records changed after `since`, leaving out live ones `excludingWriter`
    /// saved; the zone's incarnation and the account's counters checked against `since`.
    func zoneChanges(owner: String, zoneName: String, since: ChangeCursor?, limit: Int, excludingWriter: String?)
        async throws -> ZoneChangePage
    /// The zone's membership changes after `seq` (`limit` and one more).
    func membershipChanges(owner: String, zoneName: String, after seq: Int64, limit: Int) async throws
        -> [MembershipChange]

    // MARK: Records

    /// The rows (live or tombstones) of those of `keys` that have one.
    func storedRecords(owner: String, keys: [RecordKey]) async throws -> [RecordKey: StoredRecord]
    /// The row of `key`: only a live one when `live`.
    func storedRecord(owner: String, key: RecordKey, live: Bool) async throws -> StoredRecord?
    /// Writes record rows as they are, replacing the versions they follow (a request has no key twice).
    func writeRecordRows(_ rows: [StoredRecord], owner: String) async throws
    /// What an earlier request of this ID was, and what it was answered.
    func requestAnswer(owner: String, requestID: String) async throws -> (bodyHash: Data, response: Data)?
    func saveRequestAnswer(owner: String, requestID: String, bodyHash: Data, response: Data, at: Int64)
        async throws

    // MARK: Assets

    /// The asset's row; held until the transaction ends when `forUpdate`.
    func asset(id: String, forUpdate: Bool) async throws -> StoredAsset?
    /// The rows of the assets `ids`, by ID, held for the modification that reads them.
    func assets(ids: [String]) async throws -> [String: StoredAsset]
    /// A new upload's row: nothing received yet, attached to no record.
    func insertAsset(id: String, uploader: String, size: Int64, at: Int64) async throws
    /// Marks the assets at `place` other than `ids` detached at `at`, and puts `ids` there.
    func attachAssets(_ ids: [String], to place: AssetPlace, at: Int64) async throws

    // MARK: Record hierarchies

    /// The live record `key` and the records above it, nearest first, each with its stored parent.
    func chain(owner: String, from key: RecordKey) async throws -> [(name: String, node: RecordHierarchy.Node)]
    /// Whether `key` names no live record while live records name it as their parent.
    func adopts(owner: String, _ key: RecordKey) async throws -> Bool
    /// Whether a live record below `key` is the root of a share.
    func hasShareBelow(owner: String, _ key: RecordKey) async throws -> Bool
    /// The live records below `key`, however deep, down to (not into) the roots of other shares.
    func descendants(owner: String, of key: RecordKey) async throws -> [RecordHierarchy.Descendant]
    func recordType(owner: String, _ key: RecordKey) async throws -> String?
    func setShareRoot(_ root: String?, owner: String, zoneName: String, recordNames: [String]) async throws
    func logMembershipChanges(_ changes: [MembershipChange], owner: String, zoneName: String, at: Int64)
        async throws
    /// Forgets the zone's logged membership changes.
    func deleteMembershipChanges(owner: String, zoneName: String) async throws

    // MARK: Reference actions

    /// The live records of the zone whose deleteSelf references name one of `targets`, by name, each
    /// once (``ReferenceActions``).
    func referrers(owner: String, zoneName: String, of targets: [String]) async throws -> [String]
    /// Adds entries to the index of deleteSelf references (one already there stays as it is).
    func insertReferences(_ entries: [ReferenceActions.Entry], owner: String) async throws
    /// Removes the index entries of the records `keys` (the references they hold).
    func deleteReferences(owner: String, from keys: [RecordKey]) async throws
    /// Removes every index entry of a zone.
    func deleteReferences(owner: String, zoneName: String) async throws
    /// The live records of live zones, every account's, whose stored fields contain `bytes`.
    func liveRecords(containing bytes: [UInt8]) async throws -> [(owner: String, row: StoredRecord)]

    // MARK: Shares

    /// A zone's shares: the one named `recordName`, or every one (by name) when it is nil.
    func shares(owner: String, zoneName: String, recordName: String?) async throws -> [StoredShare]
    /// Where the share of an invitation token is.
    func shareLocation(token: String) async throws -> (owner: String, zoneName: String, recordName: String)?
    /// Deletes a zone's shares' rows: one share's, or every share's when `recordName` is nil.
    func deleteShareRows(owner: String, zoneName: String, recordName: String?) async throws
    /// Writes the share's row and its participants' (after ``deleteShareRows(owner:zoneName:recordName:)``).
    func insertShareRows(_ share: StoredShare) async throws

    // MARK: Change-token keys

    /// Every key, by number.
    func changeTokenKeys() async throws -> [ChangeTokenKey]
    /// Adds key number 1 unless there is one.
    func addFirstChangeTokenKey(secret: Data, at: Int64) async throws
    /// Holds the keys until the transaction ends (where writers can run at once).
    func lockChangeTokenKeys() async throws
    /// Makes every key valid until `at` at the latest.
    func expireChangeTokenKeys(at: Int64) async throws
    /// The highest key number (0 for none).
    func highestChangeTokenKeyID() async throws -> Int64
    func insertChangeTokenKey(_ key: ChangeTokenKey) async throws

    // MARK: History

    /// Raises each account's compacted position past the tombstones and membership changes older than
    /// `cutoff`: tokens from before them expire.
    func raiseCompactedSeqs(before cutoff: Int64) async throws
    func deleteMembershipChanges(before cutoff: Int64) async throws
    /// Removes record and zone tombstones older than `cutoff`; how many.
    func deleteTombstones(before cutoff: Int64) async throws -> Int
    func deleteRequestAnswers(before cutoff: Int64) async throws
}
