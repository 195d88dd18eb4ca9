import Foundation
import SyncCore
import SyncCrypto

/// Every zone key a participant can get at from the server with their own passphrase: their own slot,
/// and the chain the owner wrapped to them. A test keeps what a participant held before they were
/// removed, to show that nothing written afterwards opens with any of it.
public enum HeldKeys {
    /// The chains `client`'s account holds for the shared zone `zoneID` now (none once it is gone).
    public static func chains(
        of client: TestClient, passphrase: String, zoneID: RecordZone.ID, ownerPublicKey: Data
    ) async throws -> [ZoneKeyChain] {
        let wire: AccountEncryptionSettings = try await client.call(.encryptionSettings)
        let settings = try EncryptionSettings(
            salt: wire.salt,
            parameters: try ScryptParameters(
                costN: wire.costN, blockSizeR: wire.blockSizeR, parallelismP: wire.parallelismP),
            keyVersion: wire.keyVersion, verifier: wire.verifier)
        let accountKey = try AccountKey(passphrase: passphrase, settings: settings)
        guard let zone = try await client.listZones(scope: .shared).first(where: { $0.zoneID == zoneID }) else {
            return []
        }
        var chains: [ZoneKeyChain] = []
        if let slot = zone.encryptionKey {
            chains.append(
                try ZoneKeyChain(
                    unwrapping: slot.wrappedKey, with: accountKey, zoneName: zoneID.zoneName,
                    ownerName: zoneID.ownerName))
        }
        if let shared = zone.sharedKey, let pair = wire.keyPair {
            let identity = try AccountIdentityKey(
                unwrapping: pair.wrappedPrivateKey, publicKey: pair.publicKey, with: accountKey)
            chains.append(
                try ZoneKeyChain(
                    unwrapping: shared.wrappedKey, as: identity, pinnedOwnerKey: ownerPublicKey,
                    ownerName: zoneID.ownerName, participantName: try await client.account().userRecordName,
                    zoneName: zoneID.zoneName))
        }
        return chains
    }

    /// The key version the sealed field `field` of `record` names.
    public static func version(of field: String, in record: RecordValue) throws -> Int {
        guard let sealed = record.fields[field]?.encryptedValue else {
            throw SyncError(.invalidArguments, "field \(field) of \(record.recordID) is not sealed")
        }
        return try FieldCipher.keyVersion(of: sealed)
    }

    /// The key versions every sealed field of `record` names.
    public static func versions(in record: RecordValue) throws -> Set<Int> {
        Set(try record.fields.values.compactMap(\.encryptedValue).map { try FieldCipher.keyVersion(of: $0) })
    }
}
