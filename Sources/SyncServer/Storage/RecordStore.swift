import Foundation
import SyncCore

/// Where the server keeps accounts, zones, records and their change history.
///
/// A store is dumb about CloudKit's rules: it loads what a request touches, hands it to
/// ``RecordModificationPlanner`` and writes the plan back, all in one transaction. That way
/// every backend (SQLite now, PostgreSQL later) applies exactly the same semantics.
///
/// `owner` is the user whose data a call reads or changes: the signed-in user, or the owner of a zone
/// shared with them once the routes have checked that they may; a store never reads across owners.
public protocol RecordStore: Sendable, ShareStore, AccountStore, QuotaStore, ChangeTokenKeyStore, AssetStore {
    /// Adds an account. Throws `constraintViolation` when the username is taken (case-insensitively).
    func createAccount(_ account: StoredAccount) async throws
    /// The account with this username, compared case-insensitively.
    func account(username: String) async throws -> StoredAccount?
    /// The account with this user record name.
    func account(userRecordName: String) async throws -> StoredAccount?

    /// The session with this token hash, if it exists (expired or not: the caller decides).
    func session(tokenHash: String) async throws -> StoredSession?
    /// Forgets a session.
    func deleteSession(tokenHash: String) async throws

    /// The owner's live zones, sorted by name, with their wrapped keys.
    func zones(owner: String) async throws -> [StoredZone]
    /// Saves (creates if missing) and deletes zones; deleting a zone deletes its records.
    ///
    /// A zone that does not exist is created with the key sent (if any); one that exists without
    /// a key gains the key sent; one that has a key keeps it, whatever was sent (the first writer
    /// wins, so that devices creating a zone at once agree on its key).
    func modifyZones(owner: String, saves: [StoredZone], deletes: [String], now: Date) async throws
        -> ZoneModificationOutcome
    /// Applies a validated record modification with CloudKit's semantics; `modifier` is the user making
    /// it (the owner, or a participant writing to a shared zone), `writer` the request's `X-Writer-ID`
    /// ("" for none), kept with each row written. `hierarchyAccess` limits a participant of
    /// record-hierarchy shares, per zone, to the hierarchies they see.
    func modifyRecords(
        owner: String, modifier: String, writer: String, request: ModifyRecordsRequest, limits: ServerLimits,
        now: Date, hierarchyAccess: [String: RecordHierarchy.Access]
    ) async throws
        -> RecordModificationOutcome
    /// Zones changed since a cursor, oldest change first.
    func databaseChanges(owner: String, since: ChangeCursor?, limit: Int) async throws -> DatabaseChangePage
    /// A zone's record changes since a cursor, oldest change first. Records whose latest version a
    /// request with `X-Writer-ID` `excludingWriter` saved are left out (the cursor moves past them);
    /// deletions never are.
    func zoneChanges(owner: String, zoneName: String, since: ChangeCursor?, limit: Int, excludingWriter: String?)
        async throws -> ZoneChangePage
    /// The live records with these keys; `nil` where there is none.
    func lookupRecords(owner: String, keys: [RecordKey]) async throws -> LookupOutcome

    /// The account's encryption settings, or nil when none are set up.
    func encryptionSettings(owner: String) async throws -> AccountEncryptionSettings?
    /// Stores the account's encryption settings unless it has some: returns the settings it had
    /// (and stores nothing), or nil when these were stored.
    func createEncryptionSettings(owner: String, _ settings: AccountEncryptionSettings, now: Date) async throws
        -> AccountEncryptionSettings?
    /// Forgets the account's encryption settings and deletes every live zone of the owner that has
    /// an encryption key, with its records, recording each deletion with the reason
    /// `encryptedDataReset`. Returns the names of the deleted zones, sorted.
    func resetEncryptedData(owner: String, now: Date) async throws -> [String]
    /// Stores the account's key pair unless it has one, in the same transaction as reading the
    /// settings it belongs to (see ``KeyPairCreation``).
    func createKeyPair(owner: String, _ keyPair: AccountKeyPair) async throws -> KeyPairCreation
    /// The account's public key, or nil when it has no key pair (or no such account).
    func publicKey(owner: String) async throws -> Data?
    /// Stores a new recovery key for the account, whose account key version must be the request's
    /// (`serverRecordChanged` with the stored settings otherwise); answers the settings now stored.
    func setRecovery(owner: String, expectedKeyVersion: Int, _ recovery: StoredRecovery) async throws
        -> AccountEncryptionSettings
    /// The account's recovery key as stored, the sealed account key and verifier hash included.
    func recovery(owner: String) async throws -> StoredRecovery?
    /// A passphrase change, checked by ``PassphraseChange`` against what is stored and applied in
    /// one transaction: the new settings, the zones' keys (each zone a change other devices
    /// see), the own slots of accepted shares, the key pair. Returns the settings now stored and
    /// whether anything was written (false for a retry of a change applied already).
    func changeEncryption(owner: String, _ change: EncryptionChangeRequest, now: Date) async throws
        -> (settings: AccountEncryptionSettings, applied: Bool)

    /// Forgets tombstones modified before `tombstonesBefore` (tokens older than them then get
    /// `changeTokenExpired`) and replay answers stored before `requestsBefore`.
    /// Returns the number of tombstones removed.
    @discardableResult
    func compactHistory(tombstonesBefore: Date, requestsBefore: Date) async throws -> Int
}

extension RecordStore {
    /// Applies a record modification by the owner, or by a participant of zone-wide shares.
    public func modifyRecords(
        owner: String, modifier: String, writer: String, request: ModifyRecordsRequest, limits: ServerLimits,
        now: Date
    ) async throws -> RecordModificationOutcome {
        try await modifyRecords(
            owner: owner, modifier: modifier, writer: writer, request: request, limits: limits, now: now,
            hierarchyAccess: [:])
    }
}

/// A user account as stored.
public struct StoredAccount: Sendable, Hashable {
    public var userRecordName: String
    public var username: String
    /// The bcrypt hash of the password.
    public var passwordHash: String
    public var createdAt: Date
    /// Whether an operator disabled it: every request and push of it is refused until enabled.
    public var isDisabled: Bool

    public init(
        userRecordName: String, username: String, passwordHash: String, createdAt: Date, isDisabled: Bool = false
    ) {
        self.userRecordName = userRecordName
        self.username = username
        self.passwordHash = passwordHash
        self.createdAt = createdAt
        self.isDisabled = isDisabled
    }
}

/// A signed-in session as stored: whose it is, when it was last used, and how its account lists it.
public struct StoredSession: Sendable, Hashable {
    public var userRecordName: String
    public var createdAt: Date
    /// When a request last used it (to within the server's touch interval).
    public var lastUsedAt: Date
    /// Names it in the account's list of sessions; random, not derived from its token.
    public var id: String
    /// What the device called itself at sign-in.
    public var label: String?
    /// The client address of the sign-in, or of the last request that moved ``lastUsedAt``.
    public var address: String?

    public init(
        userRecordName: String, createdAt: Date, lastUsedAt: Date, id: String = "", label: String? = nil,
        address: String? = nil
    ) {
        self.userRecordName = userRecordName
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.id = id
        self.label = label
        self.address = address
    }
}

/// A record's place in an owner's database.
public struct RecordKey: Sendable, Hashable {
    public var zoneName: String
    public var recordName: String

    public init(zoneName: String, recordName: String) {
        self.zoneName = zoneName
        self.recordName = recordName
    }

    public init(_ recordID: RecordValue.ID) {
        self.init(zoneName: recordID.zoneID.zoneName, recordName: recordID.recordName)
    }
}

/// A live zone as stored: its name and, when it has one, its wrapped key.
public struct StoredZone: Sendable, Hashable {
    public var zoneName: String
    public var encryptionKey: RecordZone.EncryptionKey?

    public init(zoneName: String, encryptionKey: RecordZone.EncryptionKey? = nil) {
        self.zoneName = zoneName
        self.encryptionKey = encryptionKey
    }
}

/// What a zone modification did.
public struct ZoneModificationOutcome: Sendable {
    /// Every saved zone as stored after the modification, in the order of the saves.
    public var saved: [StoredZone]
    /// Zones that did not exist before.
    public var created: [String]
    /// Zones that existed without a key and gained one.
    public var keyed: [String]
    public var deleted: [String]
    /// Zones that could not be deleted because they do not exist.
    public var missing: [String]
    /// Whether anything changed (and so whether to push): saving an existing zone changes nothing
    /// unless it gains a key.
    public var changed: Bool { !created.isEmpty || !keyed.isEmpty || !deleted.isEmpty }
}

/// What a record modification did.
public struct RecordModificationOutcome: Sendable {
    /// The JSON of a ``ModifyRecordsResponse``; a replay returns the first answer's bytes.
    public var responseBody: [UInt8]
    /// Whether anything was written (false for a replayed request or when every item failed).
    public var changed: Bool
}

/// One page of database changes.
public struct DatabaseChangePage: Sendable {
    public var modifiedZoneNames: [String]
    public var deletions: [(zoneName: String, reason: ZoneDeletionReason)]
    public var cursor: ChangeCursor
    public var moreComing: Bool
}

/// One page of a zone's changes.
public struct ZoneChangePage: Sendable {
    public var modifications: [StoredRecord]
    public var deletions: [(recordName: String, recordType: String)]
    public var cursor: ChangeCursor
    public var moreComing: Bool
    /// The page's rows in change order, live records and tombstones, as ``modifications`` and
    /// ``deletions`` came from.
    public var rows: [StoredRecord] = []
    /// The owner's newest change number when the page was read.
    public var currentSeq: Int64 = 0
}

extension DatabaseChangePage {
    /// One zone row of a database change page: a zone changed, or deleted for a reason.
    struct Row {
        var zoneName: String
        var isDeleted: Bool
        var deletionReason: String?
        var seq: Int64
    }

    /// The page made of `rows`, the owner's zone rows in change order, up to `limit + 1` of them: one
    /// more than the page holds says that more are coming, and the cursor then stops at the page's
    /// last change; otherwise it is the owner's current position.
    init(rows: [Row], limit: Int, owner: String, currentSeq: Int64) {
        let moreComing = rows.count > limit
        let page = rows.prefix(limit)
        self.init(
            modifiedZoneNames: [], deletions: [],
            cursor: .database(owner: owner, scope: .private, seq: moreComing ? page.last!.seq : currentSeq),
            moreComing: moreComing)
        for row in page {
            if row.isDeleted {
                deletions.append((row.zoneName, ZoneDeletionReason(rawValue: row.deletionReason ?? "") ?? .deleted))
            } else {
                modifiedZoneNames.append(row.zoneName)
            }
        }
    }
}

extension ZoneChangePage {
    /// The page made of `rows`, a zone's record rows in change order, up to `limit + 1` of them: one
    /// more than the page holds says that more are coming, and the cursor then stops at the page's
    /// last change; otherwise it is the owner's current position.
    init(
        rows: [StoredRecord], limit: Int, owner: String, zoneName: String, incarnation: String, currentSeq: Int64
    ) {
        let moreComing = rows.count > limit
        let records = rows.prefix(limit)
        self.init(
            modifications: [], deletions: [],
            cursor: .zone(
                owner: owner, zoneName: zoneName, incarnation: incarnation,
                seq: moreComing ? records.last!.seq : currentSeq),
            moreComing: moreComing, rows: Array(records), currentSeq: currentSeq)
        for record in records {
            if record.isDeleted {
                deletions.append((record.key.recordName, record.recordType))
            } else {
                modifications.append(record)
            }
        }
    }
}

/// The answer to a lookup, in the order asked.
public struct LookupOutcome: Sendable {
    public enum Item: Sendable {
        case found(StoredRecord)
        case zoneNotFound
        case unknownItem
    }

    public var items: [Item]
}

/// What ``RecordStore/createKeyPair(owner:_:)`` did.
public enum KeyPairCreation: Sendable, Hashable {
    /// The key pair was stored.
    case created
    /// The account has a key pair already: nothing was stored; these are its settings with it.
    case exists(AccountEncryptionSettings)
    /// The account has no encryption settings, so no account key could have wrapped the private key.
    case noSettings
}

extension SyncError {
    /// What a request of an account that is gone (removed after its session was checked) is told.
    static var accountGone: SyncError { SyncError(.notAuthenticated, "the account no longer exists; sign in again") }
}
