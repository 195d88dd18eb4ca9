import Foundation
import SyncCore
import Synchronization

/// Fetching the keys a sync will need before it needs them, all at once.
extension Keyring {
    /// Fetches what sealing and opening values in `database` will need, with its two requests at once:
    /// the account's settings (the account key and key pair, as ``unlock(for:)`` does, creating what the
    /// account lacks) and the keys of the own zones that have one. A sync runs this beside its first fetch,
    /// so that its first sealed or opened value waits for no request of its own.
    ///
    /// The account key is fetched again even when held, as a new keyring would: a passphrase changed on
    /// another device is found at each sync. The zones' keys replace those held (a zone whose key was
    /// rotated elsewhere seals with the newest). Nothing is made for a zone: one without a key gets its
    /// first at its first sealed value. A shared database's zones are left to their first use (their keys
    /// come through each share). Throws what ``unlock(for:)`` throws; the uses after it find out again.
    public func prepare(for database: Database) async throws {
        let client = DatabaseClient(database: database)
        async let listed = database.scope == .private ? client.listZones().zones : []
        keys.withLock { keys in
            keys.account = nil
            keys.identity = nil
        }
        try await unlock(for: database)
        let accountKey = try await accountKey(client: client)
        for zone in try await listed where zone.encryptionKey != nil {
            // A key that does not open is left to the zone's first use, which says so.
            if let chain = try? ownChain(of: zone, accountKey: accountKey) { hold(chain, for: zone.zoneID) }
        }
    }
}
