import Foundation

/// `POST /v1/account/encryption/change`: a passphrase change. The account's key material (every
/// zone key, every own slot of an accepted share, the private key) is wrapped again under the
/// new passphrase's account key, and the new settings replace the old, in one transaction. No
/// record is sealed again: the zone keys themselves do not change.
public struct EncryptionChangeRequest: Codable, Sendable, Hashable {
    /// The `keyVersion` of the settings the device derived its old account key from: if the
    /// account has other settings now (another device changed the passphrase first), nothing
    /// changes and the answer is `409 serverRecordChanged` with the stored settings.
    public var expectedKeyVersion: Int
    /// The new settings, whose `keyVersion` is `expectedKeyVersion + 1`, sent without a key pair.
    public var settings: AccountEncryptionSettings
    /// Every zone of the private database that has a key, with its key wrapped by the new
    /// account key (the same `keyVersion` as stored).
    public var zoneKeys: [ZoneKeyUpdate]
    /// Every accepted share's zone where the account has an own slot, named as the shared
    /// database names it, with the slot wrapped by the new account key.
    public var sharedZoneKeys: [ZoneKeyUpdate]
    /// The account's key pair with its private key wrapped by the new account key: the public
    /// key must be the stored one. Required when the account has a key pair; one sent for an
    /// account that has none is published with the change.
    public var keyPair: AccountKeyPair?
    /// The new account key sealed to the account's recovery key (``RecoverySetup``): required when the
    /// account has one. With a `verifierHash`, it replaces the recovery key (a recovery does so).
    public var recovery: RecoverySetup?

    public init(
        expectedKeyVersion: Int, settings: AccountEncryptionSettings, zoneKeys: [ZoneKeyUpdate],
        sharedZoneKeys: [ZoneKeyUpdate], keyPair: AccountKeyPair?, recovery: RecoverySetup? = nil
    ) {
        self.recovery = recovery
        self.expectedKeyVersion = expectedKeyVersion
        self.settings = settings
        self.zoneKeys = zoneKeys
        self.sharedZoneKeys = sharedZoneKeys
        self.keyPair = keyPair
    }

    private enum CodingKeys: String, CodingKey {
        case expectedKeyVersion, settings, zoneKeys, sharedZoneKeys, keyPair, recovery
    }

    /// Decodes a change; `keyPair` may be left out but not sent as `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        expectedKeyVersion = try container.decode(Int.self, forKey: .expectedKeyVersion)
        settings = try container.decode(AccountEncryptionSettings.self, forKey: .settings)
        zoneKeys = try container.decode([ZoneKeyUpdate].self, forKey: .zoneKeys)
        sharedZoneKeys = try container.decode([ZoneKeyUpdate].self, forKey: .sharedZoneKeys)
        keyPair = try container.decodeIfPresentNotNull(AccountKeyPair.self, forKey: .keyPair)
        recovery = try container.decodeIfPresentNotNull(RecoverySetup.self, forKey: .recovery)
        if let problem = RecordZone.EncryptionKey.problem(keyVersion: expectedKeyVersion) {
            throw DecodingError.dataCorruptedError(
                forKey: .expectedKeyVersion, in: container, debugDescription: problem)
        }
    }
}

/// A zone's key wrapped anew, in an ``EncryptionChangeRequest``.
public struct ZoneKeyUpdate: Codable, Sendable, Hashable {
    /// The zone: one of the caller's own (private database), or, in `sharedZoneKeys`, a shared
    /// zone named with its owner's user record name.
    public var zoneID: RecordZone.ID
    /// The key wrapped by the new account key.
    public var encryptionKey: RecordZone.EncryptionKey

    public init(zoneID: RecordZone.ID, encryptionKey: RecordZone.EncryptionKey) {
        self.zoneID = zoneID
        self.encryptionKey = encryptionKey
    }
}
