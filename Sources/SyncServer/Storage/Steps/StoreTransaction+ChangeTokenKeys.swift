import Foundation
import SyncCore

/// The keys that sign change tokens, once for every backend: shared by every instance that serves
/// the store.
extension RecordStoreBackend {
    public func changeTokenKeys(now: Date) async throws -> [ChangeTokenKey] {
        let keys = try await read { try await $0.changeTokenKeys() }
        if !keys.isEmpty { return keys }
        return try await write { transaction in
            // The first key is number 1: of several writers (instances starting at once), one adds
            // it, and all read that one.
            try await transaction.addFirstChangeTokenKey(
                secret: ChangeTokenKey.randomSecret(), at: now.millisecondsSince1970)
            return try await transaction.changeTokenKeys()
        }
    }

    public func rotateChangeTokenKey(now: Date, previousValidUntil: Date) async throws -> ChangeTokenKey {
        try await write { transaction in
            // Two rotations at once take turns: each numbers its key after every other.
            try await transaction.lockChangeTokenKeys()
            try await transaction.expireChangeTokenKeys(at: previousValidUntil.millisecondsSince1970)
            let key = ChangeTokenKey(
                id: try await transaction.highestChangeTokenKeyID() + 1, secret: ChangeTokenKey.randomSecret(),
                createdAt: now, expiresAt: nil)
            try await transaction.insertChangeTokenKey(key)
            return key
        }
    }
}
