import Foundation
import NIOCore
import SyncCore

/// A store that times every call into `sync_store_duration_seconds{operation}`, whatever the backend.
struct MeasuredRecordStore: RecordStore {
    let base: any RecordStore

    func timed<Result>(_ operation: String, _ work: () async throws -> Result) async rethrows -> Result {
        let start = ContinuousClock.now
        defer { ServerMetrics.storeTimer(operation).record(since: start) }
        return try await work()
    }

    func createAccount(_ account: StoredAccount) async throws {
        try await timed("createAccount") { try await base.createAccount(account) }
    }
    func account(username: String) async throws -> StoredAccount? {
        try await timed("account") { try await base.account(username: username) }
    }
    func account(userRecordName: String) async throws -> StoredAccount? {
        try await timed("account") { try await base.account(userRecordName: userRecordName) }
    }
    func session(tokenHash: String) async throws -> StoredSession? {
        try await timed("session") { try await base.session(tokenHash: tokenHash) }
    }
    func deleteSession(tokenHash: String) async throws {
        try await timed("deleteSession") { try await base.deleteSession(tokenHash: tokenHash) }
    }
    func zones(owner: String) async throws -> [StoredZone] {
        try await timed("zones") { try await base.zones(owner: owner) }
    }
    func modifyZones(owner: String, saves: [StoredZone], deletes: [String], now: Date) async throws
        -> ZoneModificationOutcome
    {
        try await timed("modifyZones") {
            try await base.modifyZones(owner: owner, saves: saves, deletes: deletes, now: now)
        }
    }
    func modifyRecords(
        owner: String, modifier: String, writer: String, request: ModifyRecordsRequest, limits: ServerLimits,
        now: Date, hierarchyAccess: [String: RecordHierarchy.Access]
    ) async throws -> RecordModificationOutcome {
        try await timed("modifyRecords") {
            try await base.modifyRecords(
                owner: owner, modifier: modifier, writer: writer, request: request, limits: limits, now: now,
                hierarchyAccess: hierarchyAccess)
        }
    }
    func databaseChanges(owner: String, since: ChangeCursor?, limit: Int) async throws -> DatabaseChangePage {
        try await timed("databaseChanges") { try await base.databaseChanges(owner: owner, since: since, limit: limit) }
    }
    func zoneChanges(owner: String, zoneName: String, since: ChangeCursor?, limit: Int, excludingWriter: String?)
        async throws -> ZoneChangePage
    {
        try await timed("zoneChanges") {
            try await base.zoneChanges(
                owner: owner, zoneName: zoneName, since: since, limit: limit, excludingWriter: excludingWriter)
        }
    }
    func lookupRecords(owner: String, keys: [RecordKey]) async throws -> LookupOutcome {
        try await timed("lookupRecords") { try await base.lookupRecords(owner: owner, keys: keys) }
    }
    func encryptionSettings(owner: String) async throws -> AccountEncryptionSettings? {
        try await timed("encryptionSettings") { try await base.encryptionSettings(owner: owner) }
    }
    func createEncryptionSettings(owner: String, _ settings: AccountEncryptionSettings, now: Date) async throws
        -> AccountEncryptionSettings?
    {
        try await timed("createEncryptionSettings") {
            try await base.createEncryptionSettings(owner: owner, settings, now: now)
        }
    }
    func resetEncryptedData(owner: String, now: Date) async throws -> [String] {
        try await timed("resetEncryptedData") { try await base.resetEncryptedData(owner: owner, now: now) }
    }
    func createKeyPair(owner: String, _ keyPair: AccountKeyPair) async throws -> KeyPairCreation {
        try await timed("createKeyPair") { try await base.createKeyPair(owner: owner, keyPair) }
    }
    func publicKey(owner: String) async throws -> Data? {
        try await timed("publicKey") { try await base.publicKey(owner: owner) }
    }
    func setRecovery(owner: String, expectedKeyVersion: Int, _ recovery: StoredRecovery) async throws
        -> AccountEncryptionSettings
    {
        try await timed("setRecovery") {
            try await base.setRecovery(owner: owner, expectedKeyVersion: expectedKeyVersion, recovery)
        }
    }
    func recovery(owner: String) async throws -> StoredRecovery? {
        try await timed("recovery") { try await base.recovery(owner: owner) }
    }
    func changeEncryption(owner: String, _ change: EncryptionChangeRequest, now: Date) async throws
        -> (settings: AccountEncryptionSettings, applied: Bool)
    {
        try await timed("changeEncryption") { try await base.changeEncryption(owner: owner, change, now: now) }
    }
    func compactHistory(tombstonesBefore: Date, requestsBefore: Date) async throws -> Int {
        try await timed("compactHistory") {
            try await base.compactHistory(tombstonesBefore: tombstonesBefore, requestsBefore: requestsBefore)
        }
    }

    // MARK: Quotas

    func storageUsage(owner: String) async throws -> StorageUsage {
        try await timed("storageUsage") { try await base.storageUsage(owner: owner) }
    }
    func accountStorage(username: String?) async throws -> [AccountStorage] {
        try await timed("accountStorage") { try await base.accountStorage(username: username) }
    }
    func setQuota(username: String, _ quota: AccountQuota) async throws -> AccountStorage? {
        try await timed("setQuota") { try await base.setQuota(username: username, quota) }
    }
    func purgeDeletedZones(owner: String?, zoneNames: [String]?) async throws -> Int {
        try await timed("purgeDeletedZones") { try await base.purgeDeletedZones(owner: owner, zoneNames: zoneNames) }
    }

    // MARK: Shares

    func saveShare(
        owner: String, zoneName: String, recordName: String, root: ShareRoot?, now: Date,
        _ change: @escaping @Sendable (StoredShare?) throws -> StoredShare
    ) async throws -> StoredShare {
        try await timed("saveShare") {
            try await base.saveShare(
                owner: owner, zoneName: zoneName, recordName: recordName, root: root, now: now, change)
        }
    }
    func updateShare(
        token: String, actor: String, now: Date, _ change: @escaping @Sendable (StoredShare) throws -> StoredShare
    ) async throws -> StoredShare {
        try await timed("updateShare") { try await base.updateShare(token: token, actor: actor, now: now, change) }
    }
    func deleteShare(owner: String, zoneName: String, recordName: String, now: Date) async throws -> StoredShare? {
        try await timed("deleteShare") {
            try await base.deleteShare(owner: owner, zoneName: zoneName, recordName: recordName, now: now)
        }
    }
    func share(owner: String, zoneName: String, recordName: String) async throws -> StoredShare? {
        try await timed("share") { try await base.share(owner: owner, zoneName: zoneName, recordName: recordName) }
    }
    func shares(owner: String, zoneName: String) async throws -> [StoredShare] {
        try await timed("shares") { try await base.shares(owner: owner, zoneName: zoneName) }
    }
    func share(token: String) async throws -> StoredShare? {
        try await timed("share") { try await base.share(token: token) }
    }
    func sharedZones(user: String) async throws -> [SharedZone] {
        try await timed("sharedZones") { try await base.sharedZones(user: user) }
    }
    func audience(owner: String, zoneNames: Set<String>) async throws -> Set<String> {
        try await timed("audience") { try await base.audience(owner: owner, zoneNames: zoneNames) }
    }
    func zoneChangesAndMoves(
        owner: String, zoneName: String, since: ChangeCursor, limit: Int, excludingWriter: String?
    ) async throws -> (page: ZoneChangePage, moves: [MembershipChange]) {
        try await timed("zoneChangesAndMoves") {
            try await base.zoneChangesAndMoves(
                owner: owner, zoneName: zoneName, since: since, limit: limit, excludingWriter: excludingWriter)
        }
    }
}

extension MeasuredRecordStore {
    func changeTokenKeys(now: Date) async throws -> [ChangeTokenKey] {
        try await timed("changeTokenKeys") { try await base.changeTokenKeys(now: now) }
    }
    func rotateChangeTokenKey(now: Date, previousValidUntil: Date) async throws -> ChangeTokenKey {
        try await timed("rotateChangeTokenKey") {
            try await base.rotateChangeTokenKey(now: now, previousValidUntil: previousValidUntil)
        }
    }

    func createAssetUpload(id: String, uploader: String, size: Int64, now: Date) async throws {
        try await timed("createAssetUpload") {
            try await base.createAssetUpload(id: id, uploader: uploader, size: size, now: now)
        }
    }
    func asset(id: String) async throws -> StoredAsset? {
        try await timed("asset") { try await base.asset(id: id) }
    }
    func appendToAsset<Bytes: AsyncSequence>(id: String, at offset: Int64, _ bytes: Bytes, now: Date) async throws
        -> StoredAsset where Bytes.Element == ByteBuffer
    {
        try await timed("appendToAsset") { try await base.appendToAsset(id: id, at: offset, bytes, now: now) }
    }
    func readAsset(id: String, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void) async throws {
        // Timed by hand: `timed`'s closure cannot hold `write`, which does not escape.
        let start = ContinuousClock.now
        defer { ServerMetrics.storeTimer("readAsset").record(since: start) }
        try await base.readAsset(id: id, range: range, into: write)
    }
    func attachAssets(_ ids: [String], to place: AssetPlace, now: Date) async throws {
        try await timed("attachAssets") { try await base.attachAssets(ids, to: place, now: now) }
    }
    func collectAssets(detachedBefore: Date, uploadsBefore: Date, now: Date) async throws -> AssetCollection {
        try await timed("collectAssets") {
            try await base.collectAssets(detachedBefore: detachedBefore, uploadsBefore: uploadsBefore, now: now)
        }
    }
}
