import Foundation

/// The storage schema's history, once for both backends: each version with SQLite's SQL and
/// PostgreSQL's side by side, under one number.
///
/// A SQLite file records the steps it has taken by GRDB identifier (version 1 took four there, `v1`
/// to `v4`, from before PostgreSQL was supported; each later version one, `v5` on), a PostgreSQL
/// database by version number (its `schema_migration` table). A new version adds one entry here with
/// both dialects, its SQLite identifier being its number and name (``Version/sqliteIdentifier(_:)``).
/// A store refuses a file or database that has a version this server does not know.
enum SchemaHistory {
    /// One version of the schema.
    struct Version: Sendable {
        /// The version, the same on both backends.
        let number: Int
        let name: String
        /// SQLite's steps, each one of GRDB's migrations: its identifier, as files already record
        /// it, and its statements.
        let sqlite: [(identifier: String, sql: String)]
        /// PostgreSQL's statements, run in one transaction.
        let postgres: [String]
        /// What the version fills in with Swift, from rows earlier versions stored, written once over
        /// the shared steps: run after the statements, in the same transaction (SQLite's last step's).
        let fill: (@Sendable (any StoreTransaction) async throws -> Void)?

        init(
            _ number: Int, _ name: String, sqlite: [(identifier: String, sql: String)], postgres: [String],
            fill: (@Sendable (any StoreTransaction) async throws -> Void)? = nil
        ) {
            self.number = number
            self.name = name
            self.sqlite = sqlite
            self.postgres = postgres
            self.fill = fill
        }

        /// The SQLite identifier of a version added from now on: its number and name.
        static func sqliteIdentifier(_ number: Int, _ name: String) -> String { "\(number): \(name)" }
    }

    /// The newest version this server knows.
    static var current: Int { versions.last!.number }

    static let versions: [Version] = [
        Version(
            1, "accounts, sessions, zones, records, replay answers, encryption settings",
            sqlite: [
                (
                    "v1",
                    """
                    CREATE TABLE account (
                        user_record_name TEXT PRIMARY KEY,
                        username TEXT NOT NULL UNIQUE COLLATE NOCASE,
                        password_hash TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        change_seq INTEGER NOT NULL DEFAULT 0,
                        compacted_seq INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE TABLE session (
                        token_hash TEXT PRIMARY KEY,
                        user_record_name TEXT NOT NULL REFERENCES account(user_record_name) ON DELETE CASCADE,
                        created_at INTEGER NOT NULL
                    );
                    CREATE TABLE zone (
                        owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        incarnation TEXT NOT NULL,
                        change_seq INTEGER NOT NULL,
                        deleted INTEGER NOT NULL DEFAULT 0,
                        deletion_reason TEXT,
                        modified_at INTEGER NOT NULL,
                        PRIMARY KEY (owner, zone_name)
                    ) WITHOUT ROWID;
                    CREATE INDEX zone_by_change ON zone(owner, change_seq);
                    CREATE TABLE record (
                        owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        record_name TEXT NOT NULL,
                        record_type TEXT NOT NULL,
                        fields BLOB NOT NULL,
                        change_tag TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        creator TEXT NOT NULL,
                        modified_at INTEGER NOT NULL,
                        modifier TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        deleted INTEGER NOT NULL,
                        PRIMARY KEY (owner, zone_name, record_name)
                    ) WITHOUT ROWID;
                    CREATE INDEX record_by_change ON record(owner, zone_name, seq);
                    CREATE TABLE client_request (
                        owner TEXT NOT NULL,
                        request_id TEXT NOT NULL,
                        body_hash BLOB NOT NULL,
                        response BLOB NOT NULL,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (owner, request_id)
                    ) WITHOUT ROWID;
                    """
                ),
                // Sessions end after a while without use; older rows count as used when created.
                (
                    "v2: session.last_used_at",
                    "ALTER TABLE session ADD COLUMN last_used_at INTEGER"
                ),
                // Existing zones have no key (both columns NULL) until a device saves them with one.
                // The settings are a device's, kept for its other devices: the server cannot use them.
                (
                    "v3: zone encryption keys, account encryption settings",
                    """
                    ALTER TABLE zone ADD COLUMN key_version INTEGER;
                    ALTER TABLE zone ADD COLUMN wrapped_key BLOB;
                    CREATE TABLE encryption_settings (
                        user_record_name TEXT PRIMARY KEY REFERENCES account(user_record_name) ON DELETE CASCADE,
                        salt BLOB NOT NULL,
                        cost_n INTEGER NOT NULL,
                        block_size_r INTEGER NOT NULL,
                        parallelism_p INTEGER NOT NULL,
                        key_version INTEGER NOT NULL,
                        verifier BLOB NOT NULL,
                        created_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """
                ),
                // A table keyed by record name (random UUIDs, mostly) put each saved record in a page of its
                // own choosing, so a batch of 400 rewrote 400 pages, and a record of a kilobyte or more
                // spilled into an overflow page of its own (10,000 contacts took 44 MB where their fields
                // are 11 MB). In a rowid table a batch's records are written side by side at the end;
                // the index on the name holds only the key.
                (
                    "v4: records in a rowid table",
                    """
                    CREATE TABLE record_v4 (
                        owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        record_name TEXT NOT NULL,
                        record_type TEXT NOT NULL,
                        fields BLOB NOT NULL,
                        change_tag TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        creator TEXT NOT NULL,
                        modified_at INTEGER NOT NULL,
                        modifier TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        deleted INTEGER NOT NULL
                    );
                    INSERT INTO record_v4
                        SELECT owner, zone_name, record_name, record_type, fields, change_tag, created_at, creator,
                            modified_at, modifier, seq, deleted
                        FROM record ORDER BY owner, zone_name, seq;
                    DROP TABLE record;
                    ALTER TABLE record_v4 RENAME TO record;
                    CREATE UNIQUE INDEX record_by_name ON record(owner, zone_name, record_name);
                    CREATE INDEX record_by_change ON record(owner, zone_name, seq);
                    """
                ),
            ],
            postgres: [
                // `username_folded` is the username with ASCII letters lowercased, the way SQLite's NOCASE
                // compares: both backends then agree on which usernames are taken.
                """
                CREATE TABLE account (
                    user_record_name TEXT PRIMARY KEY,
                    username TEXT NOT NULL,
                    username_folded TEXT NOT NULL UNIQUE,
                    password_hash TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    change_seq BIGINT NOT NULL DEFAULT 0,
                    compacted_seq BIGINT NOT NULL DEFAULT 0
                )
                """,
                """
                CREATE TABLE session (
                    token_hash TEXT PRIMARY KEY,
                    user_record_name TEXT NOT NULL REFERENCES account(user_record_name) ON DELETE CASCADE,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE zone (
                    owner TEXT NOT NULL,
                    zone_name TEXT NOT NULL,
                    incarnation TEXT NOT NULL,
                    change_seq BIGINT NOT NULL,
                    deleted BOOLEAN NOT NULL DEFAULT FALSE,
                    deletion_reason TEXT,
                    modified_at BIGINT NOT NULL,
                    key_version BIGINT,
                    wrapped_key BYTEA,
                    PRIMARY KEY (owner, zone_name)
                )
                """,
                "CREATE INDEX zone_by_change ON zone(owner, change_seq)",
                """
                CREATE TABLE record (
                    owner TEXT NOT NULL,
                    zone_name TEXT NOT NULL,
                    record_name TEXT NOT NULL,
                    record_type TEXT NOT NULL,
                    fields BYTEA NOT NULL,
                    change_tag TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    creator TEXT NOT NULL,
                    modified_at BIGINT NOT NULL,
                    modifier TEXT NOT NULL,
                    seq BIGINT NOT NULL,
                    deleted BOOLEAN NOT NULL,
                    PRIMARY KEY (owner, zone_name, record_name)
                )
                """,
                "CREATE INDEX record_by_change ON record(owner, zone_name, seq)",
                """
                CREATE TABLE client_request (
                    owner TEXT NOT NULL,
                    request_id TEXT NOT NULL,
                    body_hash BYTEA NOT NULL,
                    response BYTEA NOT NULL,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (owner, request_id)
                )
                """,
                """
                CREATE TABLE encryption_settings (
                    user_record_name TEXT PRIMARY KEY REFERENCES account(user_record_name) ON DELETE CASCADE,
                    salt BYTEA NOT NULL,
                    cost_n BIGINT NOT NULL,
                    block_size_r BIGINT NOT NULL,
                    parallelism_p BIGINT NOT NULL,
                    key_version BIGINT NOT NULL,
                    verifier BYTEA NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
            ]),
        Version(
            2, "shares",
            sqlite: [
                (
                    "v5: shares",
                    """
                    CREATE TABLE share (
                        owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        token TEXT NOT NULL UNIQUE,
                        public_permission TEXT NOT NULL,
                        invitation_key_version INTEGER,
                        invitation_key BLOB,
                        PRIMARY KEY (owner, zone_name)
                    ) WITHOUT ROWID;
                    CREATE TABLE share_participant (
                        owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        position INTEGER NOT NULL,
                        user_record_name TEXT NOT NULL,
                        username TEXT NOT NULL,
                        role TEXT NOT NULL,
                        permission TEXT NOT NULL,
                        status TEXT NOT NULL,
                        key_version INTEGER,
                        wrapped_key BLOB,
                        PRIMARY KEY (owner, zone_name, user_record_name)
                    ) WITHOUT ROWID;
                    CREATE INDEX share_participant_by_user ON share_participant(user_record_name, status);
                    """
                )
            ],
            postgres: [
                """
                CREATE TABLE share (
                    owner TEXT NOT NULL,
                    zone_name TEXT NOT NULL,
                    token TEXT NOT NULL UNIQUE,
                    public_permission TEXT NOT NULL,
                    invitation_key_version BIGINT,
                    invitation_key BYTEA,
                    PRIMARY KEY (owner, zone_name)
                )
                """,
                """
                CREATE TABLE share_participant (
                    owner TEXT NOT NULL,
                    zone_name TEXT NOT NULL,
                    position BIGINT NOT NULL,
                    user_record_name TEXT NOT NULL,
                    username TEXT NOT NULL,
                    role TEXT NOT NULL,
                    permission TEXT NOT NULL,
                    status TEXT NOT NULL,
                    key_version BIGINT,
                    wrapped_key BYTEA,
                    PRIMARY KEY (owner, zone_name, user_record_name)
                )
                """,
                "CREATE INDEX share_participant_by_user ON share_participant(user_record_name, status)",
            ]),
        // Which writer (an engine's X-Writer-ID) saved each version, so that its fetches can leave out
        // what it saved itself. Rows written before have none.
        Version(
            3, "record.writer",
            sqlite: [
                (
                    "v6: record.writer",
                    "ALTER TABLE record ADD COLUMN writer TEXT NOT NULL DEFAULT ''"
                )
            ],
            postgres: [
                "ALTER TABLE record ADD COLUMN writer TEXT NOT NULL DEFAULT ''"
            ]),
        Version(
            4, "record hierarchies and record-hierarchy shares",
            sqlite: [
                (
                    "v7: record hierarchies and record-hierarchy shares",
                    """
                    ALTER TABLE record ADD COLUMN parent_name TEXT;
                    ALTER TABLE record ADD COLUMN share_name TEXT;
                    ALTER TABLE record ADD COLUMN share_root TEXT;
                    CREATE INDEX record_by_parent ON record(owner, zone_name, parent_name) WHERE parent_name IS NOT NULL;
                    CREATE INDEX record_by_share_root ON record(owner, zone_name, share_root) WHERE share_root IS NOT NULL;
                    CREATE TABLE share_membership (
                        owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        record_name TEXT NOT NULL,
                        record_type TEXT NOT NULL,
                        old_root TEXT,
                        new_root TEXT,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (owner, zone_name, seq)
                    ) WITHOUT ROWID;
                    CREATE TABLE share_v7 (
                        owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        record_name TEXT NOT NULL,
                        root_record_name TEXT,
                        token TEXT NOT NULL UNIQUE,
                        public_permission TEXT NOT NULL,
                        invitation_key_version INTEGER,
                        invitation_key BLOB,
                        PRIMARY KEY (owner, zone_name, record_name)
                    ) WITHOUT ROWID;
                    INSERT INTO share_v7
                        SELECT owner, zone_name, 'cloudkit.zoneshare', NULL, token, public_permission, invitation_key_version,
                            invitation_key
                        FROM share;
                    DROP TABLE share;
                    ALTER TABLE share_v7 RENAME TO share;
                    CREATE TABLE share_participant_v7 (
                        owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        share_name TEXT NOT NULL,
                        position INTEGER NOT NULL,
                        user_record_name TEXT NOT NULL,
                        username TEXT NOT NULL,
                        role TEXT NOT NULL,
                        permission TEXT NOT NULL,
                        status TEXT NOT NULL,
                        key_version INTEGER,
                        wrapped_key BLOB,
                        PRIMARY KEY (owner, zone_name, share_name, user_record_name)
                    ) WITHOUT ROWID;
                    INSERT INTO share_participant_v7
                        SELECT owner, zone_name, 'cloudkit.zoneshare', position, user_record_name, username, role, permission,
                            status, key_version, wrapped_key
                        FROM share_participant;
                    DROP TABLE share_participant;
                    ALTER TABLE share_participant_v7 RENAME TO share_participant;
                    CREATE INDEX share_participant_by_user ON share_participant(user_record_name, status);
                    """
                )
            ],
            postgres: [
                // Each record's parent, the share it is the root of, and the root of the shared
                // hierarchy it is in; and a log of records that joined or left a hierarchy.
                """
                ALTER TABLE record ADD COLUMN parent_name TEXT, ADD COLUMN share_name TEXT,
                    ADD COLUMN share_root TEXT
                """,
                """
                CREATE INDEX record_by_parent ON record(owner, zone_name, parent_name)
                    WHERE parent_name IS NOT NULL
                """,
                """
                CREATE INDEX record_by_share_root ON record(owner, zone_name, share_root)
                    WHERE share_root IS NOT NULL
                """,
                """
                CREATE TABLE share_membership (
                    owner TEXT NOT NULL,
                    zone_name TEXT NOT NULL,
                    seq BIGINT NOT NULL,
                    record_name TEXT NOT NULL,
                    record_type TEXT NOT NULL,
                    old_root TEXT,
                    new_root TEXT,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (owner, zone_name, seq)
                )
                """,
                // Shares are named by their record: the zone-wide share by `cloudkit.zoneshare`.
                """
                ALTER TABLE share ADD COLUMN record_name TEXT NOT NULL DEFAULT 'cloudkit.zoneshare',
                    ADD COLUMN root_record_name TEXT
                """,
                "ALTER TABLE share DROP CONSTRAINT share_pkey",
                "ALTER TABLE share ADD PRIMARY KEY (owner, zone_name, record_name)",
                """
                ALTER TABLE share_participant ADD COLUMN share_name TEXT NOT NULL DEFAULT 'cloudkit.zoneshare'
                """,
                "ALTER TABLE share_participant DROP CONSTRAINT share_participant_pkey",
                "ALTER TABLE share_participant ADD PRIMARY KEY (owner, zone_name, share_name, user_record_name)",
            ]),
        // Each session gets a random ID (existing ones too, so they stay valid and can be listed), a
        // label and an address; accounts can be disabled; ended sessions are kept with their reason
        // until compaction forgets them.
        Version(
            5, "account lifecycle",
            sqlite: [
                (
                    "v8: account lifecycle",
                    """
                    ALTER TABLE session ADD COLUMN id TEXT;
                    ALTER TABLE session ADD COLUMN label TEXT;
                    ALTER TABLE session ADD COLUMN address TEXT;
                    UPDATE session SET id = lower(hex(randomblob(16))), last_used_at = COALESCE(last_used_at, created_at);
                    CREATE UNIQUE INDEX session_by_id ON session(id);
                    CREATE INDEX session_by_user ON session(user_record_name);
                    ALTER TABLE account ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;
                    CREATE TABLE ended_session (
                        token_hash TEXT PRIMARY KEY,
                        user_record_name TEXT NOT NULL,
                        reason TEXT NOT NULL,
                        ended_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX ended_session_by_end ON ended_session(ended_at);
                    """
                )
            ],
            postgres: [
                "ALTER TABLE session ADD COLUMN id TEXT, ADD COLUMN label TEXT, ADD COLUMN address TEXT",
                "UPDATE session SET id = replace(gen_random_uuid()::text, '-', '')",
                "ALTER TABLE session ALTER COLUMN id SET NOT NULL",
                "CREATE UNIQUE INDEX session_by_id ON session(id)",
                "CREATE INDEX session_by_user ON session(user_record_name)",
                "ALTER TABLE account ADD COLUMN disabled BOOLEAN NOT NULL DEFAULT FALSE",
                """
                CREATE TABLE ended_session (
                    token_hash TEXT PRIMARY KEY,
                    user_record_name TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    ended_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX ended_session_by_end ON ended_session(ended_at)",
            ]),
        // Each account's and each zone's usage, counted from what is stored already.
        Version(
            6, "storage quotas",
            sqlite: [
                (
                    "v9: storage quotas",
                    """
                    ALTER TABLE account ADD COLUMN used_bytes INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE account ADD COLUMN quota_bytes INTEGER;
                    ALTER TABLE zone ADD COLUMN used_bytes INTEGER NOT NULL DEFAULT 0;
                    UPDATE zone SET used_bytes = COALESCE((SELECT SUM(length(CAST(fields AS BLOB))) FROM record
                        WHERE record.owner = zone.owner AND record.zone_name = zone.zone_name), 0)
                    WHERE deleted = 0;
                    UPDATE account SET used_bytes = COALESCE((SELECT SUM(used_bytes) FROM zone
                        WHERE zone.owner = account.user_record_name AND deleted = 0), 0);
                    """
                )
            ],
            postgres: [
                "ALTER TABLE account ADD COLUMN used_bytes BIGINT NOT NULL DEFAULT 0, ADD COLUMN quota_bytes BIGINT",
                "ALTER TABLE zone ADD COLUMN used_bytes BIGINT NOT NULL DEFAULT 0",
                """
                UPDATE zone z SET used_bytes = s.bytes
                FROM (SELECT owner, zone_name, SUM(octet_length(fields)) AS bytes FROM record GROUP BY owner, zone_name) s
                WHERE z.owner = s.owner AND z.zone_name = s.zone_name AND NOT z.deleted
                """,
                """
                UPDATE account a SET used_bytes = s.bytes
                FROM (SELECT owner, SUM(used_bytes) AS bytes FROM zone WHERE NOT deleted GROUP BY owner) s
                WHERE a.user_record_name = s.owner
                """,
            ]),
        Version(
            7, "change-token keys",
            sqlite: [
                (
                    "v10: change-token keys",
                    """
                    CREATE TABLE change_token_key (
                        id INTEGER PRIMARY KEY,
                        secret BLOB NOT NULL,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER
                    )
                    """
                )
            ],
            postgres: [
                """
                CREATE TABLE change_token_key (
                    id BIGINT PRIMARY KEY,
                    secret BYTEA NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT
                )
                """
            ]),
        // The account's key pair beside its settings (a reset, which deletes the settings, deletes it
        // too), and each share participant's shared key: the zone's keys the owner wrapped to the
        // participant's public key. Existing rows have neither.
        Version(
            8, "account key pairs, participants' shared keys",
            sqlite: [
                (
                    "v11: account key pairs, participants' shared keys",
                    """
                    ALTER TABLE encryption_settings ADD COLUMN public_key BLOB;
                    ALTER TABLE encryption_settings ADD COLUMN wrapped_private_key BLOB;
                    ALTER TABLE share_participant ADD COLUMN shared_key_version INTEGER;
                    ALTER TABLE share_participant ADD COLUMN shared_key BLOB;
                    """
                )
            ],
            postgres: [
                "ALTER TABLE encryption_settings ADD COLUMN public_key BYTEA, ADD COLUMN wrapped_private_key BYTEA",
                "ALTER TABLE share_participant ADD COLUMN shared_key_version BIGINT, ADD COLUMN shared_key BYTEA",
            ]),
        Version(
            9, "assets",
            sqlite: [
                (
                    "v12: assets",
                    """
                    CREATE TABLE asset (
                        id TEXT PRIMARY KEY NOT NULL,
                        uploader TEXT NOT NULL,
                        size INTEGER NOT NULL,
                        received INTEGER NOT NULL DEFAULT 0,
                        created_at INTEGER NOT NULL,
                        owner TEXT,
                        zone_name TEXT,
                        record_name TEXT,
                        detached_at INTEGER
                    ) WITHOUT ROWID;
                    CREATE INDEX asset_by_record ON asset(owner, zone_name, record_name) WHERE owner IS NOT NULL;
                    """
                )
            ],
            postgres: [
                """
                CREATE TABLE asset (
                    id TEXT PRIMARY KEY,
                    uploader TEXT NOT NULL,
                    size BIGINT NOT NULL,
                    received BIGINT NOT NULL DEFAULT 0,
                    created_at BIGINT NOT NULL,
                    owner TEXT,
                    zone_name TEXT,
                    record_name TEXT,
                    detached_at BIGINT
                )
                """,
                "CREATE INDEX asset_by_record ON asset(owner, zone_name, record_name) WHERE owner IS NOT NULL",
                """
                CREATE TABLE asset_chunk (
                    asset_id TEXT NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
                    start_at BIGINT NOT NULL,
                    bytes BYTEA NOT NULL,
                    PRIMARY KEY (asset_id, start_at)
                )
                """,
            ]),
        // The index of deleteSelf references (``ReferenceActions``): for each live record, the records
        // of its zone it references with `deleteSelf`, found by the record deleted; filled from the
        // records stored before, of which only those whose fields hold the action's bytes are decoded.
        Version(
            10, "deleteSelf references",
            sqlite: [
                (
                    Version.sqliteIdentifier(10, "deleteSelf references"),
                    """
                    CREATE TABLE record_reference (
                        owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        target_name TEXT NOT NULL,
                        record_name TEXT NOT NULL,
                        PRIMARY KEY (owner, zone_name, target_name, record_name)
                    ) WITHOUT ROWID;
                    CREATE INDEX record_reference_by_record ON record_reference(owner, zone_name, record_name);
                    """
                )
            ],
            postgres: [
                """
                CREATE TABLE record_reference (
                    owner TEXT NOT NULL,
                    zone_name TEXT NOT NULL,
                    target_name TEXT NOT NULL,
                    record_name TEXT NOT NULL,
                    PRIMARY KEY (owner, zone_name, target_name, record_name)
                )
                """,
                "CREATE INDEX record_reference_by_record ON record_reference(owner, zone_name, record_name)",
            ],
            fill: { try await $0.indexStoredReferences() }),
        // An account's recovery key: its public half and tag (which every device sees), the account key
        // sealed to it, and the hash of its verifier (which only a request showing the verifier gets past).
        Version(
            11, "recovery keys",
            sqlite: [
                (
                    Version.sqliteIdentifier(11, "recovery keys"),
                    """
                    ALTER TABLE encryption_settings ADD COLUMN recovery_public_key BLOB;
                    ALTER TABLE encryption_settings ADD COLUMN recovery_key_tag BLOB;
                    ALTER TABLE encryption_settings ADD COLUMN recovery_binding_tag BLOB;
                    ALTER TABLE encryption_settings ADD COLUMN recovery_sealed_key BLOB;
                    ALTER TABLE encryption_settings ADD COLUMN recovery_verifier_hash BLOB;
                    """
                )
            ],
            postgres: [
                """
                ALTER TABLE encryption_settings ADD COLUMN recovery_public_key BYTEA,
                    ADD COLUMN recovery_key_tag BYTEA, ADD COLUMN recovery_binding_tag BYTEA,
                    ADD COLUMN recovery_sealed_key BYTEA,
                    ADD COLUMN recovery_verifier_hash BYTEA
                """
            ]),
    ]
}
