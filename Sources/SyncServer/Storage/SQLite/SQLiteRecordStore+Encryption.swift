import Foundation
import GRDB
import SyncCore

/// The schema of the account's key pair and its shared keys (the settings' reads and writes are the
/// shared steps', `StoreTransaction+Encryption.swift`).
extension SQLiteRecordStore {
    /// Migration v11: the account's key pair beside its settings (a reset, which deletes the
    /// settings, deletes it too), and each share participant's shared key: the zone's keys the
    /// owner wrapped to the participant's public key. Existing rows have neither.
    static let keyPairMigration = """
        ALTER TABLE encryption_settings ADD COLUMN public_key BLOB;
        ALTER TABLE encryption_settings ADD COLUMN wrapped_private_key BLOB;
        ALTER TABLE share_participant ADD COLUMN shared_key_version INTEGER;
        ALTER TABLE share_participant ADD COLUMN shared_key BLOB;
        """
}
