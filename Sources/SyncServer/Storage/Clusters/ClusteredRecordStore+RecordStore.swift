import Foundation
import NIOCore
import SyncCore

// Each call of the store, answered by the cluster its account lives on (see ``ClusteredRecordStore``).

extension ClusteredRecordStore: RecordStore {
    // MARK: Accounts and sessions

    public func createAccount(_ account: StoredAccount) async throws {
        let cluster = placementRule.choose(among: clusterNames, counts: try await directory.accountCounts())
        guard try await directory.place(account, on: cluster) else {
            throw SyncError(.constraintViolation, "username '\(account.username)' is taken; choose another or sign in")
        }
        forgetPlacement(of: account.userRecordName)
        do {
            try await store(cluster).createAccount(account)
        } catch {
            try? await directory.remove(userRecordName: account.userRecordName)
            throw error
        }
    }

    public func account(username: String) async throws -> StoredAccount? {
        guard let placement = try await directory.placement(username: username) else { return nil }
        if placement.moving { throw Self.moving }
        return try await store(placement.cluster).account(username: username)
    }

    public func account(userRecordName: String) async throws -> StoredAccount? {
        try await owning(userRecordName) { try await $0.account(userRecordName: userRecordName) }
    }

    public func session(tokenHash: String) async throws -> StoredSession? {
        try await searching(tokenHash) { try await $0.session(tokenHash: tokenHash) }
    }

    public func deleteSession(tokenHash: String) async throws {
        _ = try await everywhere { try await $0.deleteSession(tokenHash: tokenHash) }
    }

    public func createSession(_ session: StoredSession, tokenHash: String) async throws {
        try await owning(session.userRecordName) { try await $0.createSession(session, tokenHash: tokenHash) }
        remember(tokenHash, on: try await clusterName(of: session.userRecordName))
    }

    public func sessionState(tokenHash: String) async throws -> SessionState {
        let state = try await searching(tokenHash) { store -> SessionState? in
            let state = try await store.sessionState(tokenHash: tokenHash)
            return state == .unknown ? nil : state
        }
        guard let state else { return .unknown }
        if case .live(let session, _) = state, try await placement(of: session.userRecordName)?.moving == true {
            throw Self.moving
        }
        return state
    }

    public func touchSession(tokenHash: String, usedAt: Date, address: String) async throws {
        if let name = hint(tokenHash) {
            try await store(name).touchSession(tokenHash: tokenHash, usedAt: usedAt, address: address)
        } else {
            _ = try await everywhere {
                try await $0.touchSession(tokenHash: tokenHash, usedAt: usedAt, address: address)
            }
        }
    }

    public func sessions(userRecordName: String) async throws -> [(tokenHash: String, session: StoredSession)] {
        try await owning(userRecordName) { try await $0.sessions(userRecordName: userRecordName) }
    }

    public func endSessions(
        userRecordName: String, id: String?, sparing: String?, reason: SyncError.Reason, at now: Date
    ) async throws -> [String] {
        try await owning(userRecordName) {
            try await $0.endSessions(userRecordName: userRecordName, id: id, sparing: sparing, reason: reason, at: now)
        }
    }

    public func expireSessions(lastUsedBefore: Date, createdBefore: Date, at now: Date) async throws -> Int {
        try await everywhere {
            try await $0.expireSessions(lastUsedBefore: lastUsedBefore, createdBefore: createdBefore, at: now)
        }.reduce(0, +)
    }

    public func forgetEndedSessions(endedBefore: Date) async throws -> Int {
        try await everywhere { try await $0.forgetEndedSessions(endedBefore: endedBefore) }.reduce(0, +)
    }

    public func changePassword(userRecordName: String, passwordHash: String, sparing: String, at now: Date)
        async throws -> [String]
    {
        try await owning(userRecordName) {
            try await $0.changePassword(
                userRecordName: userRecordName, passwordHash: passwordHash, sparing: sparing, at: now)
        }
    }

    public func setDisabled(_ disabled: Bool, userRecordName: String) async throws -> Bool {
        try await owning(userRecordName) { try await $0.setDisabled(disabled, userRecordName: userRecordName) }
    }

    public func accountSummaries() async throws -> [AccountSummary] {
        try await everywhere { try await $0.accountSummaries() }.joined()
            .sorted(by: Self.byUsername(\.username, \.userRecordName))
    }

    /// The order of the stores' lists of accounts: by username as they fold it, then user record name.
    private static func byUsername<Account>(
        _ username: KeyPath<Account, String>, _ userRecordName: KeyPath<Account, String>
    ) -> (Account, Account) -> Bool {
        { first, second in
            (PostgresRecordStore.folded(first[keyPath: username]), first[keyPath: userRecordName])
                < (PostgresRecordStore.folded(second[keyPath: username]), second[keyPath: userRecordName])
        }
    }

    public func memberships(user: String) async throws -> [StoredShare] {
        try await gathered {
            try await $0.memberships(user: user)
        } owner: {
            $0.owner
        }
    }

    /// What `read` gives on every cluster, each answer kept only from the cluster its owner lives on: a
    /// moved account's old copy, deleted a few seconds after its move, is never listed beside the new.
    private func gathered<Item>(
        _ read: (PostgresRecordStore) async throws -> [Item], owner: (Item) -> String
    ) async throws -> [Item] {
        var items: [Item] = []
        for name in clusterNames {
            for item in try await read(try store(name)) where try await clusterName(of: owner(item)) == name {
                items.append(item)
            }
        }
        return items
    }

    public func deleteAccount(userRecordName: String, at now: Date) async throws -> [String] {
        let ended = try await owning(userRecordName) {
            try await $0.deleteAccount(userRecordName: userRecordName, at: now)
        }
        try await directory.remove(userRecordName: userRecordName)
        forgetPlacement(of: userRecordName)
        return ended
    }

    // MARK: Zones and records

    public func zones(owner: String) async throws -> [StoredZone] {
        try await owning(owner) { try await $0.zones(owner: owner) }
    }

    public func modifyZones(owner: String, saves: [StoredZone], deletes: [String], now: Date) async throws
        -> ZoneModificationOutcome
    {
        try await owning(owner) { try await $0.modifyZones(owner: owner, saves: saves, deletes: deletes, now: now) }
    }

    public func modifyRecords(
        owner: String, modifier: String, writer: String, request: ModifyRecordsRequest, limits: ServerLimits,
        now: Date, hierarchyAccess: [String: RecordHierarchy.Access]
    ) async throws -> RecordModificationOutcome {
        try await owning(owner) { store in
            let uploads = try await carryUploads(of: modifier, namedBy: request, to: store)
            let outcome = try await store.modifyRecords(
                owner: owner, modifier: modifier, writer: writer, request: request, limits: limits, now: now,
                hierarchyAccess: hierarchyAccess)
            try await adoptUploads(uploads, of: modifier, owner: owner, on: store)
            return outcome
        }
    }

    public func databaseChanges(owner: String, since: ChangeCursor?, limit: Int) async throws -> DatabaseChangePage {
        try await owning(owner) { try await $0.databaseChanges(owner: owner, since: since, limit: limit) }
    }

    public func zoneChanges(
        owner: String, zoneName: String, since: ChangeCursor?, limit: Int, excludingWriter: String?
    ) async throws -> ZoneChangePage {
        try await owning(owner) {
            try await $0.zoneChanges(
                owner: owner, zoneName: zoneName, since: since, limit: limit, excludingWriter: excludingWriter)
        }
    }

    public func lookupRecords(owner: String, keys: [RecordKey]) async throws -> LookupOutcome {
        try await owning(owner) { try await $0.lookupRecords(owner: owner, keys: keys) }
    }

    // MARK: Encryption

    public func encryptionSettings(owner: String) async throws -> AccountEncryptionSettings? {
        try await owning(owner) { try await $0.encryptionSettings(owner: owner) }
    }

    public func createEncryptionSettings(owner: String, _ settings: AccountEncryptionSettings, now: Date)
        async throws -> AccountEncryptionSettings?
    {
        try await owning(owner) { try await $0.createEncryptionSettings(owner: owner, settings, now: now) }
    }

    public func resetEncryptedData(owner: String, now: Date) async throws -> [String] {
        try await owning(owner) { try await $0.resetEncryptedData(owner: owner, now: now) }
    }

    public func createKeyPair(owner: String, _ keyPair: AccountKeyPair) async throws -> KeyPairCreation {
        try await owning(owner) { try await $0.createKeyPair(owner: owner, keyPair) }
    }

    public func publicKey(owner: String) async throws -> Data? {
        try await owning(owner) { try await $0.publicKey(owner: owner) }
    }

    public func setRecovery(owner: String, expectedKeyVersion: Int, _ recovery: StoredRecovery) async throws
        -> AccountEncryptionSettings
    {
        try await owning(owner) {
            try await $0.setRecovery(owner: owner, expectedKeyVersion: expectedKeyVersion, recovery)
        }
    }

    public func recovery(owner: String) async throws -> StoredRecovery? {
        try await owning(owner) { try await $0.recovery(owner: owner) }
    }

    /// The change on the account's own cluster, with the slots of shares whose owners live there; the
    /// slots of shares on other clusters are checked first (the change must cover them as it covers the
    /// others) and written after, once the account's cluster holds the new settings. A retry writes them
    /// again, so a change cut between the two is finished by the client's retry.
    public func changeEncryption(owner: String, _ change: EncryptionChangeRequest, now: Date) async throws
        -> (settings: AccountEncryptionSettings, applied: Bool)
    {
        let home = try await clusterName(of: owner)
        var elsewhere: [String: [ZoneKeyUpdate]] = [:]
        var local = change
        local.sharedZoneKeys = []
        for update in change.sharedZoneKeys {
            let cluster = try await clusterName(of: update.zoneID.ownerName)
            if cluster == home {
                local.sharedZoneKeys.append(update)
            } else {
                elsewhere[cluster, default: []].append(update)
            }
        }
        for name in clusterNames where name != home {
            let slots = try await store(name).sharedSlotVersions(user: owner)
            try PassphraseChange.checkSharedSlots(elsewhere[name] ?? [], stored: slots)
        }
        let outcome = try await owning(owner) { try await $0.changeEncryption(owner: owner, local, now: now) }
        if outcome.settings.withoutKeyPair == change.settings {
            for (name, updates) in elsewhere.sorted(by: { $0.key < $1.key }) {
                try await store(name).replaceSharedSlotKeys(updates, user: owner)
            }
        }
        return outcome
    }

    public func compactHistory(tombstonesBefore: Date, requestsBefore: Date) async throws -> Int {
        try await everywhere {
            try await $0.compactHistory(tombstonesBefore: tombstonesBefore, requestsBefore: requestsBefore)
        }.reduce(0, +)
    }

    // MARK: Quotas

    public func storageUsage(owner: String) async throws -> StorageUsage {
        try await owning(owner) { try await $0.storageUsage(owner: owner) }
    }

    public func accountStorage(username: String?) async throws -> [AccountStorage] {
        if let username {
            guard let placement = try await directory.placement(username: username) else { return [] }
            return try await store(placement.cluster).accountStorage(username: username)
        }
        return try await everywhere { try await $0.accountStorage(username: nil) }.joined()
            .sorted(by: Self.byUsername(\.username, \.userRecordName))
    }

    public func setQuota(username: String, _ quota: AccountQuota) async throws -> AccountStorage? {
        guard let placement = try await directory.placement(username: username) else { return nil }
        if placement.moving { throw Self.moving }
        return try await store(placement.cluster).setQuota(username: username, quota)
    }

    public func purgeDeletedZones(owner: String?, zoneNames: [String]?) async throws -> Int {
        if let owner {
            return try await owning(owner) { try await $0.purgeDeletedZones(owner: owner, zoneNames: zoneNames) }
        }
        return try await everywhere { try await $0.purgeDeletedZones(owner: nil, zoneNames: zoneNames) }.reduce(0, +)
    }

    // MARK: Shares

    public func saveShare(
        owner: String, zoneName: String, recordName: String, root: ShareRoot?, now: Date,
        _ change: @escaping @Sendable (StoredShare?) throws -> StoredShare
    ) async throws -> StoredShare {
        try await owning(owner) {
            try await $0.saveShare(
                owner: owner, zoneName: zoneName, recordName: recordName, root: root, now: now, change)
        }
    }

    public func updateShare(
        token: String, actor: String, now: Date, _ change: @escaping @Sendable (StoredShare) throws -> StoredShare
    ) async throws -> StoredShare {
        // The share's owner says where it lives; an unknown token is refused as one store refuses it.
        guard let share = try await share(token: token) else {
            return try await main.updateShare(token: token, actor: actor, now: now, change)
        }
        return try await owning(share.owner) { try await $0.updateShare(token: token, actor: actor, now: now, change) }
    }

    public func deleteShare(owner: String, zoneName: String, recordName: String, now: Date) async throws
        -> StoredShare?
    {
        try await owning(owner) {
            try await $0.deleteShare(owner: owner, zoneName: zoneName, recordName: recordName, now: now)
        }
    }

    public func share(owner: String, zoneName: String, recordName: String) async throws -> StoredShare? {
        try await owning(owner) { try await $0.share(owner: owner, zoneName: zoneName, recordName: recordName) }
    }

    public func shares(owner: String, zoneName: String) async throws -> [StoredShare] {
        try await owning(owner) { try await $0.shares(owner: owner, zoneName: zoneName) }
    }

    public func share(token: String) async throws -> StoredShare? {
        guard let found = try await searching(token, { try await $0.share(token: token) }) else { return nil }
        // Where the owner is now: a hint may name the cluster the owner left.
        return try await owning(found.owner) { try await $0.share(token: token) }
    }

    public func sharedZones(user: String) async throws -> [SharedZone] {
        try await gathered {
            try await $0.sharedZones(user: user)
        } owner: {
            $0.owner
        }
        .sorted { ($0.owner, $0.zoneName) < ($1.owner, $1.zoneName) }
    }

    public func audience(owner: String, zoneNames: Set<String>) async throws -> Set<String> {
        try await owning(owner) { try await $0.audience(owner: owner, zoneNames: zoneNames) }
    }

    public func zoneChangesAndMoves(
        owner: String, zoneName: String, since: ChangeCursor, limit: Int, excludingWriter: String?
    ) async throws -> (page: ZoneChangePage, moves: [MembershipChange]) {
        try await owning(owner) {
            try await $0.zoneChangesAndMoves(
                owner: owner, zoneName: zoneName, since: since, limit: limit, excludingWriter: excludingWriter)
        }
    }

    // MARK: Change-token keys (the main cluster's)

    public func changeTokenKeys(now: Date) async throws -> [ChangeTokenKey] {
        try await main.changeTokenKeys(now: now)
    }

    public func rotateChangeTokenKey(now: Date, previousValidUntil: Date) async throws -> ChangeTokenKey {
        try await main.rotateChangeTokenKey(now: now, previousValidUntil: previousValidUntil)
    }

    // MARK: Assets

    public func createAssetUpload(id: String, uploader: String, size: Int64, now: Date) async throws {
        try await owning(uploader) { try await $0.createAssetUpload(id: id, uploader: uploader, size: size, now: now) }
        remember(id, on: try await clusterName(of: uploader))
    }

    public func asset(id: String) async throws -> StoredAsset? {
        try await searching(id) { try await $0.asset(id: id) }
    }

    /// The store holding asset `id`; the main one when none does (which then refuses it as one store would).
    private func assetStore(_ id: String) async throws -> PostgresRecordStore {
        _ = try await asset(id: id)
        return try hint(id).map(store) ?? main
    }

    public func appendToAsset<Bytes: AsyncSequence>(id: String, at offset: Int64, _ bytes: Bytes, now: Date)
        async throws -> StoredAsset where Bytes.Element == ByteBuffer
    {
        try await assetStore(id).appendToAsset(id: id, at: offset, bytes, now: now)
    }

    public func readAsset(id: String, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void) async throws {
        try await assetStore(id).readAsset(id: id, range: range, into: write)
    }

    public func attachAssets(_ ids: [String], to place: AssetPlace, now: Date) async throws {
        try await owning(place.owner) { try await $0.attachAssets(ids, to: place, now: now) }
    }

    public func collectAssets(detachedBefore: Date, uploadsBefore: Date, now: Date) async throws -> AssetCollection {
        try await everywhere {
            try await $0.collectAssets(detachedBefore: detachedBefore, uploadsBefore: uploadsBefore, now: now)
        }.reduce(into: AssetCollection()) {
            $0.assets += $1.assets
            $0.bytes += $1.bytes
        }
    }
}
