import Foundation
import PostgresNIO
import SyncCore

/// The schema of the account's key pair and its shared keys (the settings' reads and writes are the
/// shared steps', `StoreTransaction+Encryption.swift`).
extension PostgresRecordStore {
    /// Migration 8: the account's key pair beside its settings (a reset, which deletes the
    /// settings, deletes it too), and each share participant's shared key: the zone's keys the
    /// owner wrapped to the participant's public key. Existing rows have neither.
    static let keyPairMigration = PostgresSchema.Migration(
        version: 8, name: "account key pairs, participants' shared keys",
        statements: [
            "ALTER TABLE encryption_settings ADD COLUMN public_key BYTEA, ADD COLUMN wrapped_private_key BYTEA",
            "ALTER TABLE share_participant ADD COLUMN shared_key_version BIGINT, ADD COLUMN shared_key BYTEA",
        ])
}
