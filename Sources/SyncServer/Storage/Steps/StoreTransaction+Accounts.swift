import Foundation
import SyncCore

/// Ending sessions and deleting accounts, once for every backend.
extension RecordStoreBackend {
    public func endSessions(
        userRecordName: String, id: String?, sparing: String?, reason: SyncError.Reason, at now: Date
    ) async throws -> [String] {
        try await write { transaction in
            try await transaction.endSessions(
                user: userRecordName, id: id, sparing: sparing, reason: reason, at: now.millisecondsSince1970)
        }
    }

    public func changePassword(userRecordName: String, passwordHash: String, sparing: String, at now: Date)
        async throws -> [String]
    {
        try await write { transaction in
            try await transaction.setPasswordHash(passwordHash, user: userRecordName)
            return try await transaction.endSessions(
                user: userRecordName, id: nil, sparing: sparing, reason: .sessionEnded, at: now.millisecondsSince1970)
        }
    }

    public func deleteAccount(userRecordName: String, at now: Date) async throws -> [String] {
        try await write { transaction in
            // Writers of the account queue on its lock; those after this find no account.
            _ = try await transaction.lockAccount(owner: userRecordName)
            let ended = try await transaction.endSessions(
                user: userRecordName, id: nil, sparing: nil, reason: .accountDeleted, at: now.millisecondsSince1970)
            try await transaction.deleteAccountRows(owner: userRecordName)
            return ended
        }
    }

    public func memberships(user: String) async throws -> [StoredShare] {
        try await read { transaction in
            var shares: [StoredShare] = []
            for place in try await transaction.membershipPlaces(user: user) {
                shares += try await transaction.shares(
                    owner: place.owner, zoneName: place.zoneName, recordName: place.recordName)
            }
            return shares
        }
    }
}
