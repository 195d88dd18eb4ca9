import Foundation
import Logging
import PostgresNIO
import SyncCore

/// The store for several server instances: one PostgreSQL database through postgres-nio's pool.
///
/// It answers exactly as ``SQLiteRecordStore`` does; the semantics live in the planner both share.
///
/// **Change positions never skip.** Each account row holds the account's change counter. A write
/// locks that row first (`SELECT … FOR UPDATE`) and takes positions from it inside its transaction,
/// so writers of one account queue on the row and commit in the order of their positions. A reader
/// works in one snapshot (a single statement, which is one by itself, or a repeatable-read
/// transaction when it needs several), which therefore holds every change up to the counter it
/// reads and none after: a token it hands out can never sit past a change that commits later. A
/// global sequence would not do: a writer could take position 8, another 9 and commit first, and a
/// reader handed 9 would never see 8.
public final class PostgresRecordStore: RecordStore {
    let client: PostgresClient
    private let watch = PostgresConnectionWatch()
    /// Where the store logs (its queries log at debug).
    public let logger: Logger
    private let runTask: Task<Void, Never>
    /// The storage quota of accounts without one of their own, in bytes; nil for none.
    public let defaultQuotaBytes: Int64?
    /// How long a request waits for a connection: the pool keeps requests waiting while it cannot
    /// connect, and a client is better told to come back.
    let connectionWait: Duration

    private init(
        client: PostgresClient, logger: Logger, runTask: Task<Void, Never>, defaultQuotaBytes: Int64?,
        connectionWait: Duration
    ) {
        self.client = client
        self.logger = logger
        self.runTask = runTask
        self.defaultQuotaBytes = defaultQuotaBytes
        self.connectionWait = connectionWait
    }

    /// Connects to the database at `url` (`postgres://user:password@host:port/database`), brings its
    /// schema up to date and returns the store; ``close()`` ends its connections.
    /// - Parameters:
    ///   - defaultQuotaBytes: the storage quota of accounts without one of their own (see
    ///     ``StorageQuota``); nil for none.
    ///   - connectionWait: how long a request waits for a connection before it is told
    ///     `serviceUnavailable` (``SyncServerConfiguration/databaseConnectionWait``).
    public static func connect(
        url: String, logger: Logger, defaultQuotaBytes: Int64? = nil, connectionWait: Duration = .seconds(10)
    ) async throws -> PostgresRecordStore {
        let configuration = try PostgresURL.configuration(url)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let runTask = Task { await client.run() }
        let store = PostgresRecordStore(
            client: client, logger: logger, runTask: runTask, defaultQuotaBytes: defaultQuotaBytes,
            connectionWait: connectionWait)
        do {
            try await PostgresSchema.migrate(client, logger: logger)
        } catch {
            store.close()
            throw error
        }
        return store
    }

    /// The newest schema version this server knows; a database at a newer one is refused.
    public static var schemaVersion: Int { PostgresSchema.currentVersion }
    /// Every schema version this server knows, in order (numbers may skip: branches merged).
    public static var schemaVersions: [Int] { PostgresSchema.migrations.map(\.version) }

    /// The client settings for a database address, for tools that connect beside a store.
    public static func configuration(url: String) throws -> PostgresClient.Configuration {
        try PostgresURL.configuration(url)
    }

    /// Lends a connection of the store's pool: for tests and tools that look at what is stored.
    public func withConnection<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    )
        async throws -> Result
    {
        try await PostgresAvailability.checked {
            try await PostgresAvailability.leasing(within: self.connectionWait) { leased in
                try await self.client.withConnection { connection in
                    leased()
                    return try await self.watch.run(on: connection) { try await body(connection) }
                }
            }
        }
    }

    /// Runs one statement on a pooled connection; its rows, read before the connection goes back to the pool.
    @discardableResult
    func query(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await withConnection { connection in try await connection.query(query, logger: logger).collect() }
    }

    /// Closes the connections.
    public func close() {
        runTask.cancel()
    }

    deinit {
        runTask.cancel()
    }

    // MARK: Accounts and sessions

    public func createAccount(_ account: StoredAccount) async throws {
        let inserted = try await query(
            """
            INSERT INTO account (user_record_name, username, username_folded, password_hash, created_at)
            VALUES (\(account.userRecordName), \(account.username), \(Self.folded(account.username)),
                \(account.passwordHash), \(account.createdAt.millisecondsSince1970))
            ON CONFLICT (username_folded) DO NOTHING
            RETURNING 1
            """, logger: logger
        )
        if inserted.isEmpty {
            throw SyncError(.constraintViolation, "username '\(account.username)' is taken; choose another or sign in")
        }
    }

    public func account(username: String) async throws -> StoredAccount? {
        try await accounts(
            "SELECT \(unescaped: Self.accountColumns) FROM account WHERE username_folded = \(Self.folded(username))")
    }

    public func account(userRecordName: String) async throws -> StoredAccount? {
        try await accounts(
            "SELECT \(unescaped: Self.accountColumns) FROM account WHERE user_record_name = \(userRecordName)")
    }

    private static let accountColumns = "user_record_name, username, password_hash, created_at, disabled"

    private func accounts(_ statement: PostgresQuery) async throws -> StoredAccount? {
        for (name, username, hash, created, disabled) in try await query(statement, logger: logger).decode(
            (String, String, String, Int64, Bool).self)
        {
            return StoredAccount(
                userRecordName: name, username: username, passwordHash: hash,
                createdAt: Date(millisecondsSince1970: created), isDisabled: disabled)
        }
        return nil
    }

    /// ASCII letters lowercased and nothing else, as SQLite's NOCASE compares.
    static func folded(_ username: String) -> String {
        String(
            decoding: username.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    public func createSession(tokenHash: String, userRecordName: String, createdAt: Date) async throws {
        try await createSession(
            StoredSession(
                userRecordName: userRecordName, createdAt: createdAt, lastUsedAt: createdAt, id: StoredSession.newID()),
            tokenHash: tokenHash)
    }

    public func session(tokenHash: String) async throws -> StoredSession? {
        for (name, created, used) in try await query(
            "SELECT user_record_name, created_at, last_used_at FROM session WHERE token_hash = \(tokenHash)",
            logger: logger
        ).decode((String, Int64, Int64).self) {
            return StoredSession(
                userRecordName: name, createdAt: Date(millisecondsSince1970: created),
                lastUsedAt: Date(millisecondsSince1970: used))
        }
        return nil
    }

    public func touchSession(tokenHash: String, usedAt: Date) async throws {
        try await query(
            "UPDATE session SET last_used_at = \(usedAt.millisecondsSince1970) WHERE token_hash = \(tokenHash)",
            logger: logger)
    }

    public func deleteSession(tokenHash: String) async throws {
        try await query("DELETE FROM session WHERE token_hash = \(tokenHash)", logger: logger)
    }

    public func deleteSessions(lastUsedBefore: Date) async throws -> Int {
        try await query(
            "DELETE FROM session WHERE last_used_at < \(lastUsedBefore.millisecondsSince1970) RETURNING 1",
            logger: logger
        ).count
    }

    // MARK: Zones

    public func zones(owner: String) async throws -> [StoredZone] {
        var zones: [StoredZone] = []
        for (name, version, wrapped) in try await query(
            """
            SELECT zone_name, key_version, wrapped_key FROM zone
            WHERE owner = \(owner) AND NOT deleted ORDER BY zone_name COLLATE "C"
            """, logger: logger
        ).decode((String, Int64?, Data?).self) {
            zones.append(StoredZone(zoneName: name, keyVersion: version, wrappedKey: wrapped))
        }
        return zones
    }

    public func modifyZones(owner: String, saves: [StoredZone], deletes: [String], now: Date) async throws
        -> ZoneModificationOutcome
    {
        // A zone made again must start empty: what its deleted namesake left goes first, in chunks.
        try await purgeDeletedZones(owner: owner, zoneNames: saves.map(\.zoneName))
        let at = now.millisecondsSince1970
        return try await transaction { connection in
            var seq = try await Self.lockAccount(connection, owner: owner, logger: self.logger).current
            var outcome = ZoneModificationOutcome(saved: [], created: [], keyed: [], deleted: [], missing: [])
            for save in saves {
                let name = save.zoneName
                var stored: StoredZone?
                for try await (version, wrapped) in try await connection.query(
                    """
                    SELECT key_version, wrapped_key FROM zone
                    WHERE owner = \(owner) AND zone_name = \(name) AND NOT deleted
                    """, logger: self.logger
                ).decode((Int64?, Data?).self) {
                    stored = StoredZone(zoneName: name, keyVersion: version, wrappedKey: wrapped)
                }
                switch ZoneSave.decide(stored: stored, save: save) {
                case .keep(let zone):
                    outcome.saved.append(zone)
                case .addKey(let key):
                    seq += 1
                    try await connection.query(
                        """
                        UPDATE zone SET key_version = \(Int64(key.keyVersion)), wrapped_key = \(key.wrappedKey),
                            change_seq = \(seq), modified_at = \(at)
                        WHERE owner = \(owner) AND zone_name = \(name)
                        """, logger: self.logger)
                    outcome.keyed.append(name)
                    outcome.saved.append(save)
                case .create:
                    seq += 1
                    // Anything left of a deleted zone of this name (a purge is not done yet) goes now.
                    _ = try await Self.purgeChunk(
                        connection, owner: owner, zoneName: name, limit: nil, logger: self.logger)
                    let version = save.encryptionKey.map { Int64($0.keyVersion) }
                    try await connection.query(
                        """
                        INSERT INTO zone (owner, zone_name, incarnation, change_seq, deleted, deletion_reason,
                            modified_at, key_version, wrapped_key)
                        VALUES (\(owner), \(name), \(UUID().uuidString), \(seq), FALSE, NULL, \(at), \(version),
                            \(save.encryptionKey?.wrappedKey))
                        ON CONFLICT (owner, zone_name) DO UPDATE SET
                            incarnation = EXCLUDED.incarnation, change_seq = EXCLUDED.change_seq, deleted = FALSE,
                            deletion_reason = NULL, modified_at = EXCLUDED.modified_at,
                            key_version = EXCLUDED.key_version, wrapped_key = EXCLUDED.wrapped_key, used_bytes = 0
                        """, logger: self.logger)
                    outcome.created.append(name)
                    outcome.saved.append(save)
                }
            }
            for name in deletes {
                guard try await Self.zoneIsLive(connection, owner: owner, zoneName: name, logger: self.logger) else {
                    outcome.missing.append(name)
                    continue
                }
                seq += 1
                try await Self.deleteZone(
                    connection, owner: owner, zoneName: name, reason: .deleted, seq: seq, now: now, logger: self.logger)
                outcome.deleted.append(name)
            }
            try await Self.setChangeSeq(connection, owner: owner, seq: seq, logger: self.logger)
            return outcome
        }
    }

    /// Turns a live zone into a tombstone that remembers why it went; its key goes with it, and its
    /// usage leaves the owner's at once. Its records are unreachable from now on; they are removed in
    /// chunks afterwards (``purgeDeletedZones(owner:zoneNames:)``), so that deleting a large zone is
    /// not one long transaction.
    static func deleteZone(
        _ connection: PostgresConnection, owner: String, zoneName: String, reason: ZoneDeletionReason, seq: Int64,
        now: Date, logger: Logger
    ) async throws {
        try await uncountZone(connection, owner: owner, zoneName: zoneName, logger: logger)
        try await connection.query(
            "DELETE FROM share_membership WHERE owner = \(owner) AND zone_name = \(zoneName)", logger: logger)
        // Its share goes with it: the participants see the zone leave their shared databases.
        try await deleteShareRows(connection, owner: owner, zoneName: zoneName, logger: logger)
        try await connection.query(
            """
            UPDATE zone SET deleted = TRUE, deletion_reason = \(reason.rawValue), change_seq = \(seq),
                modified_at = \(now.millisecondsSince1970), key_version = NULL, wrapped_key = NULL
            WHERE owner = \(owner) AND zone_name = \(zoneName)
            """, logger: logger)
    }

    // MARK: Records

    public func modifyRecords(
        owner: String, modifier: String, writer: String, request: ModifyRecordsRequest, limits: ServerLimits,
        now: Date, hierarchyAccess: [String: RecordHierarchy.Access]
    ) async throws -> RecordModificationOutcome {
        // Each save's fields are encoded once, for the replay hash and for storing.
        let savedFields = request.saves.map { FieldCoding.encode($0.fields) }
        let bodyHash = try request.clientRequestID.map { _ in
            try ReplayGuard.hash(of: request, savedFields: savedFields)
        }
        // Read from the request alone, before the account's lock.
        let assetIDs = AssetRules.namedAssetIDs(request)
        let at = now.millisecondsSince1970
        return try await transaction { connection in
            // First the account row: every later read sees what the writers before this one committed.
            let currentSeq = try await Self.lockAccount(connection, owner: owner, logger: self.logger).current
            if let requestID = request.clientRequestID, let bodyHash {
                for try await (storedHash, storedResponse) in try await connection.query(
                    """
                    SELECT body_hash, response FROM client_request
                    WHERE owner = \(owner) AND request_id = \(requestID)
                    """, logger: self.logger
                ).decode((Data, Data).self) {
                    let response = try ReplayGuard.replay(
                        storedHash: storedHash, storedResponse: storedResponse, bodyHash: bodyHash,
                        requestID: requestID, request: request, savedFields: savedFields)
                    return RecordModificationOutcome(responseBody: response, changed: false)
                }
            }

            var hierarchy = RecordHierarchy.Context()
            hierarchy.access = hierarchyAccess
            let usage = try await Self.storageUsage(
                connection, owner: owner, defaultQuotaBytes: self.defaultQuotaBytes, logger: self.logger)
            let plan = try await Self.plan(
                request, owner: owner, modifier: modifier, writer: writer, limits: limits, now: now,
                currentSeq: currentSeq, savedFields: savedFields, hierarchy: hierarchy, usage: usage,
                assetIDs: assetIDs, connection, logger: self.logger)
            try await Self.apply(plan, owner: owner, now: now, connection, logger: self.logger)
            let responseBody = try plan.responseBody(desiredKeys: request.desiredKeys)
            if let requestID = request.clientRequestID, let bodyHash {
                try await connection.query(
                    """
                    INSERT INTO client_request (owner, request_id, body_hash, response, created_at)
                    VALUES (\(owner), \(requestID), \(bodyHash), \(try ReplayGuard.stored(plan, responseBody: responseBody, for: request)), \(at))
                    """, logger: self.logger)
            }
            return RecordModificationOutcome(responseBody: responseBody, changed: !plan.rows.isEmpty)
        }
    }

    /// Reads what a modification touches and plans it (``RecordModificationPlanner``), inside a
    /// transaction that holds the owner's account lock (`currentSeq` read under it).
    /// - Parameter assetIDs: ``AssetRules/namedAssetIDs(_:)`` of the request, when the caller read them
    ///   before the lock.
    static func plan(
        _ request: ModifyRecordsRequest, owner: String, modifier: String, writer: String, limits: ServerLimits,
        now: Date, currentSeq: Int64, savedFields: [Data]?, hierarchy: RecordHierarchy.Context,
        usage: StorageUsage? = nil, assetIDs: [String]? = nil, _ connection: PostgresConnection, logger: Logger
    ) async throws -> RecordModificationPlanner.Plan {
        var keys = request.recordKeys
        var liveZones = Set<String>()
        for name in Set(keys.map(\.zoneName))
        where try await zoneIsLive(connection, owner: owner, zoneName: name, logger: logger) {
            liveZones.insert(name)
        }
        keys.removeAll { !liveZones.contains($0.zoneName) }
        var existing: [RecordKey: StoredRecord] = [:]
        for zoneName in Set(keys.map(\.zoneName)) {
            let names = keys.filter { $0.zoneName == zoneName }.map(\.recordName)
            for record in try await records(
                connection,
                """
                SELECT \(unescaped: StoredRecord.columns) FROM record
                WHERE owner = \(owner) AND zone_name = \(zoneName) AND record_name = ANY(\(names))
                """, logger: logger)
            {
                existing[record.key] = record
            }
        }
        return try RecordModificationPlanner.plan(
            request, owner: owner, modifier: modifier, writer: writer, liveZones: liveZones, existing: existing,
            currentSeq: currentSeq, now: now.millisecondsSince1970, limits: limits, savedFields: savedFields,
            hierarchy: try await hierarchyContext(
                connection, owner: owner, request: request, base: hierarchy, logger: logger),
            assets: try await assets(connection, ids: assetIDs ?? AssetRules.namedAssetIDs(request), logger),
            usage: usage)
    }

    /// Writes a plan: its rows, the records its hierarchy changes move, the shares it deletes, and the
    /// zones' and the owner's change numbers.
    static func apply(
        _ plan: RecordModificationPlanner.Plan, owner: String, now: Date, _ connection: PostgresConnection,
        logger: Logger
    ) async throws {
        if !plan.rows.isEmpty {
            try await upsert(plan.rows, owner: owner, storedBytes: plan.storedBytes, connection, logger: logger)
        }
        let moves = try await moveDescendants(
            of: plan.rootChanges, owner: owner, seq: plan.endSeq, now: now, connection, logger: logger)
        for share in plan.deletedShares {
            try await deleteShareRows(
                connection, owner: owner, zoneName: share.zoneName, recordName: share.recordName, logger: logger)
        }
        for (zoneName, seq) in plan.zoneSeqs(after: moves) {
            try await connection.query(
                """
                UPDATE zone SET change_seq = \(seq), modified_at = \(now.millisecondsSince1970)
                WHERE owner = \(owner) AND zone_name = \(zoneName)
                """, logger: logger)
        }
        try await setChangeSeq(connection, owner: owner, seq: moves.seq, logger: logger)
        for (key, assetIDs) in plan.assetAttachments {
            try await attachAssets(connection, assetIDs, to: AssetPlace(owner: owner, key: key), now: now, logger)
        }
    }

    /// Writes record rows in one statement, a column per array (a request has no key twice: validation
    /// refuses that before), and counts them in the zones' and the owner's usage. postgres-nio's arrays
    /// hold no NULL, so a missing name travels as "" (a name is never empty) and turns back into NULL here.
    /// `storedBytes` gives the size of what some of the rows replace, when the caller read it already
    /// under the owner's lock.
    static func upsert(
        _ rows: [StoredRecord], owner: String, storedBytes: [RecordKey: Int64] = [:], _ connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await countUsage(of: rows, owner: owner, storedBytes: storedBytes, connection, logger: logger)
        try await connection.query(
            """
            INSERT INTO record (owner, zone_name, record_name, record_type, fields, change_tag, created_at, creator,
                modified_at, modifier, seq, deleted, writer, parent_name, share_name, share_root)
            SELECT \(owner), z, n, t, f, c, ca, cr, ma, mo, s, d, w, NULLIF(p, ''), NULLIF(sn, ''), NULLIF(sr, '')
            FROM unnest(\(rows.map(\.key.zoneName))::text[], \(rows.map(\.key.recordName))::text[],
                \(rows.map(\.recordType))::text[], \(rows.map { ByteBuffer(bytes: $0.fields) })::bytea[],
                \(rows.map(\.changeTag))::text[], \(rows.map(\.createdAt))::bigint[], \(rows.map(\.creator))::text[],
                \(rows.map(\.modifiedAt))::bigint[], \(rows.map(\.modifier))::text[], \(rows.map(\.seq))::bigint[],
                \(rows.map(\.isDeleted))::boolean[], \(rows.map(\.writer))::text[],
                \(rows.map { $0.parentName ?? "" })::text[], \(rows.map { $0.shareName ?? "" })::text[],
                \(rows.map { $0.shareRoot ?? "" })::text[]) AS u(z, n, t, f, c, ca, cr, ma, mo, s, d, w, p, sn, sr)
            ON CONFLICT (owner, zone_name, record_name) DO UPDATE SET
                record_type = EXCLUDED.record_type, fields = EXCLUDED.fields, change_tag = EXCLUDED.change_tag,
                created_at = EXCLUDED.created_at, creator = EXCLUDED.creator, modified_at = EXCLUDED.modified_at,
                modifier = EXCLUDED.modifier, seq = EXCLUDED.seq, deleted = EXCLUDED.deleted, writer = EXCLUDED.writer,
                parent_name = EXCLUDED.parent_name, share_name = EXCLUDED.share_name, share_root = EXCLUDED.share_root
            """, logger: logger)
    }

    public func databaseChanges(owner: String, since: ChangeCursor?, limit: Int) async throws -> DatabaseChangePage {
        // One statement, so one snapshot: the counter and the zones agree without a transaction.
        let rows = try await query(
            """
            SELECT a.change_seq, a.compacted_seq, z.zone_name, z.deleted, z.deletion_reason, z.change_seq
            FROM account a LEFT JOIN LATERAL (
                SELECT zone_name, deleted, deletion_reason, change_seq FROM zone
                WHERE owner = a.user_record_name AND change_seq > \(since?.seq ?? 0) ORDER BY change_seq
                LIMIT \(limit + 1)
            ) z ON true
            WHERE a.user_record_name = \(owner)
            ORDER BY z.change_seq
            """, logger: logger
        ).decode((Int64, Int64, String?, Bool?, String?, Int64?).self)
        guard let (currentSeq, compactedSeq, _, _, _, _) = rows.first else { throw SyncError.accountGone }
        try since?.checkCurrent(compactedSeq: compactedSeq, currentSeq: currentSeq)
        let zones = rows.compactMap { _, _, name, deleted, reason, seq in
            name.map {
                DatabaseChangePage.Row(zoneName: $0, isDeleted: deleted ?? false, deletionReason: reason, seq: seq ?? 0)
            }
        }
        return DatabaseChangePage(rows: zones, limit: limit, owner: owner, currentSeq: currentSeq)
    }

    public func zoneChanges(
        owner: String, zoneName: String, since: ChangeCursor?, limit: Int, excludingWriter: String?
    ) async throws -> ZoneChangePage {
        try await withConnection { connection in
            try await Self.zoneChanges(
                connection, owner: owner, zoneName: zoneName, since: since, limit: limit,
                excludingWriter: excludingWriter, logger: self.logger)
        }
    }

    /// A zone's changes in one statement (the account's counters, the zone's incarnation and a page of
    /// its rows), which is one snapshot by itself: a fetch is one round trip and needs no transaction.
    static func zoneChanges(
        _ connection: PostgresConnection, owner: String, zoneName: String, since: ChangeCursor?, limit: Int,
        excludingWriter: String?, logger: Logger
    ) async throws -> ZoneChangePage {
        // "" (rows no writer saved) leaves nothing out.
        let excluded = excludingWriter ?? ""
        var head: (currentSeq: Int64, compactedSeq: Int64, incarnation: String?)?
        var records: [StoredRecord] = []
        for try await row in try await connection.query(
            """
            SELECT a.change_seq, a.compacted_seq, z.incarnation, r.*
            FROM account a
            LEFT JOIN zone z ON z.owner = a.user_record_name AND z.zone_name = \(zoneName) AND NOT z.deleted
            LEFT JOIN LATERAL (
                SELECT \(unescaped: StoredRecord.columns) FROM record
                WHERE z.incarnation IS NOT NULL AND owner = a.user_record_name AND zone_name = \(zoneName)
                    AND seq > \(since?.seq ?? 0) AND (deleted OR \(excluded) = '' OR writer <> \(excluded))
                ORDER BY seq LIMIT \(limit + 1)
            ) r ON true
            WHERE a.user_record_name = \(owner)
            ORDER BY r.seq
            """, logger: logger
        ) {
            let cells = row.makeRandomAccess()
            if head == nil {
                head = try (cells[0].decode(Int64.self), cells[1].decode(Int64.self), cells[2].decode(String?.self))
            }
            if let record = try StoredRecord(cells, from: 3) { records.append(record) }
        }
        guard let head else { throw SyncError.accountGone }
        guard let incarnation = head.incarnation else {
            throw SyncError(.zoneNotFound, "zone '\(zoneName)' does not exist")
        }
        try since?.checkCurrent(
            compactedSeq: head.compactedSeq, currentSeq: head.currentSeq, incarnation: incarnation)
        return ZoneChangePage(
            rows: records, limit: limit, owner: owner, zoneName: zoneName, incarnation: incarnation,
            currentSeq: head.currentSeq)
    }

    public func lookupRecords(owner: String, keys: [RecordKey]) async throws -> LookupOutcome {
        try await snapshot { connection in
            var liveZones: [String: Bool] = [:]
            var outcome = LookupOutcome(items: [])
            for key in keys {
                if liveZones[key.zoneName] == nil {
                    liveZones[key.zoneName] = try await Self.zoneIsLive(
                        connection, owner: owner, zoneName: key.zoneName, logger: self.logger)
                }
                if liveZones[key.zoneName] != true {
                    outcome.items.append(.zoneNotFound)
                } else if let record = try await Self.records(
                    connection,
                    """
                    SELECT \(unescaped: StoredRecord.columns) FROM record
                    WHERE owner = \(owner) AND zone_name = \(key.zoneName) AND record_name = \(key.recordName)
                        AND NOT deleted
                    """, logger: self.logger
                ).first {
                    outcome.items.append(.found(record))
                } else {
                    outcome.items.append(.unknownItem)
                }
            }
            return outcome
        }
    }

    // MARK: History

    public func compactHistory(tombstonesBefore: Date, requestsBefore: Date) async throws -> Int {
        // Records deleted zones left (a purge cut short) go before their zones' tombstones can.
        try await purgeDeletedZones(owner: nil, zoneNames: nil)
        let cutoff = tombstonesBefore.millisecondsSince1970
        return try await transaction { connection in
            try await connection.query(
                """
                UPDATE account SET compacted_seq = GREATEST(compacted_seq,
                    COALESCE((SELECT MAX(seq) FROM record
                        WHERE owner = user_record_name AND deleted AND modified_at < \(cutoff)), 0),
                    COALESCE((SELECT MAX(change_seq) FROM zone
                        WHERE owner = user_record_name AND deleted AND modified_at < \(cutoff)), 0))
                """, logger: self.logger)
            // Membership moves are history as tombstones are: tokens from before them expire with them.
            try await connection.query(
                """
                UPDATE account SET compacted_seq = GREATEST(compacted_seq, COALESCE((SELECT MAX(seq) FROM share_membership
                    WHERE owner = user_record_name AND created_at < \(cutoff)), 0))
                """, logger: self.logger)
            try await connection.query(
                "DELETE FROM share_membership WHERE created_at < \(cutoff)", logger: self.logger)
            let records = try await connection.query(
                "DELETE FROM record WHERE deleted AND modified_at < \(cutoff) RETURNING 1", logger: self.logger
            ).collect().count
            let zones = try await connection.query(
                "DELETE FROM zone WHERE deleted AND modified_at < \(cutoff) RETURNING 1", logger: self.logger
            ).collect().count
            try await connection.query(
                "DELETE FROM client_request WHERE created_at < \(requestsBefore.millisecondsSince1970)",
                logger: self.logger)
            return records + zones
        }
    }

    // MARK: Helpers

    /// Runs `work` in one read-only, repeatable-read snapshot of the database.
    func snapshot<Result: Sendable>(_ work: @escaping @Sendable (PostgresConnection) async throws -> Result)
        async throws -> Result
    {
        try await transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", work)
    }

    /// Runs `work` in one transaction on a pooled connection; read-committed unless `begin` says otherwise.
    func transaction<Result: Sendable>(
        begin: PostgresQuery = "BEGIN", _ work: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await withConnection { connection in
            try await Self.transaction(connection, begin: begin, logger: self.logger, work)
        }
    }

    /// Begins a transaction, runs `work`, commits; rolls back and rethrows what `work` threw, as it
    /// is (postgres-nio's own `withTransaction` wraps it, and a `SyncError` would lose its code).
    static func transaction<Result: Sendable>(
        _ connection: PostgresConnection, begin: PostgresQuery, logger: Logger,
        _ work: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await connection.query(begin, logger: logger)
        do {
            let result = try await work(connection)
            try await connection.query("COMMIT", logger: logger)
            return result
        } catch {
            // On a lost connection PostgreSQL has rolled back already, and a query sent on it may
            // never be answered.
            if !PostgresAvailability.isUnavailable(error) {
                _ = try? await connection.query("ROLLBACK", logger: logger)
            }
            throw error
        }
    }

    /// Whether the zone exists and is not deleted.
    static func zoneIsLive(
        _ connection: PostgresConnection, owner: String, zoneName: String, logger: Logger
    ) async throws -> Bool {
        try await !connection.query(
            "SELECT 1 FROM zone WHERE owner = \(owner) AND zone_name = \(zoneName) AND NOT deleted", logger: logger
        ).collect().isEmpty
    }

    /// Locks the owner's account row until the transaction ends, and reads its change counters.
    static func lockAccount(_ connection: PostgresConnection, owner: String, logger: Logger) async throws -> (
        current: Int64, compacted: Int64
    ) {
        try await seqs(connection, owner: owner, lock: true, logger: logger)
    }

    static func seqs(_ connection: PostgresConnection, owner: String, lock: Bool, logger: Logger)
        async throws -> (current: Int64, compacted: Int64)
    {
        for try await (current, compacted) in try await connection.query(
            """
            SELECT change_seq, compacted_seq FROM account WHERE user_record_name = \(owner)
            \(unescaped: lock ? "FOR UPDATE" : "")
            """, logger: logger
        ).decode((Int64, Int64).self) {
            return (current, compacted)
        }
        throw SyncError.accountGone
    }

    static func setChangeSeq(_ connection: PostgresConnection, owner: String, seq: Int64, logger: Logger)
        async throws
    {
        try await connection.query(
            "UPDATE account SET change_seq = \(seq) WHERE user_record_name = \(owner)", logger: logger)
    }

    static func records(_ connection: PostgresConnection, _ query: PostgresQuery, logger: Logger)
        async throws -> [StoredRecord]
    {
        var records: [StoredRecord] = []
        for try await row in try await connection.query(query, logger: logger) {
            if let record = try StoredRecord(row.makeRandomAccess(), from: 0) { records.append(record) }
        }
        return records
    }
}

extension StoredRecord {
    /// The record in a row's ``StoredRecord/columns``, from column `first` on; nil when
    /// they are NULL (an outer join that found no record).
    init?(_ cells: PostgresRandomAccessRow, from first: Int) throws {
        guard let zoneName = try cells[first].decode(String?.self) else { return nil }
        func cell<Value: PostgresDecodable>(_ offset: Int) throws -> Value {
            try cells[first + offset].decode(Value.self)
        }
        self.init(
            key: RecordKey(zoneName: zoneName, recordName: try cell(1)), recordType: try cell(2),
            fields: try cell(3), changeTag: try cell(4), createdAt: try cell(5), creator: try cell(6),
            modifiedAt: try cell(7), modifier: try cell(8), seq: try cell(9), isDeleted: try cell(10),
            parentName: try cell(11), shareName: try cell(12), shareRoot: try cell(13))
    }
}

extension [PostgresRow] {
    /// Every row's columns, decoded.
    func decode<each Column: PostgresDecodable>(_ columns: (repeat each Column).Type) throws -> [(repeat each Column)] {
        try map { try $0.decode(columns) }
    }
}
