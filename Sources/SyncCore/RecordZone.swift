import Foundation

/// A zone of records in a database: the unit of change tracking and of atomic saves.
///
/// Mirrors `CKRecordZone`. Every zone supports fetching changes and atomic modifications.
public struct RecordZone: Codable, Sendable, Hashable {
    /// Identifies a zone: its name and the user who owns it.
    public struct ID: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The owner name that stands for the signed-in user (CloudKit's `CKCurrentUserDefaultName`).
        public static let defaultOwnerName = "__defaultOwner__"

        /// The zone's name, unique within its owner's database.
        public var zoneName: String
        /// The record name of the user who owns the zone, or ``defaultOwnerName``.
        public var ownerName: String

        /// Creates a zone ID.
        /// - Parameters:
        ///   - zoneName: the zone's name (1 to 255 bytes of UTF-8, no control characters, no leading `_`).
        ///   - ownerName: the owner's user record name; defaults to the signed-in user.
        public init(zoneName: String, ownerName: String = ID.defaultOwnerName) {
            self.zoneName = zoneName
            self.ownerName = ownerName
        }

        private enum CodingKeys: String, CodingKey {
            case zoneName, ownerName
        }

        /// Decodes a zone ID; a missing `ownerName` means the signed-in user, and a `null` one is
        /// refused (it would otherwise address the caller's own zone by accident).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            zoneName = try container.decode(String.self, forKey: .zoneName)
            ownerName = try container.decodeIfPresentNotNull(String.self, forKey: .ownerName) ?? Self.defaultOwnerName
        }

        public var description: String {
            ownerName == Self.defaultOwnerName ? zoneName : "\(zoneName) (owner \(ownerName))"
        }

        public static func < (lhs: ID, rhs: ID) -> Bool {
            (lhs.ownerName, lhs.zoneName) < (rhs.ownerName, rhs.zoneName)
        }
    }

    /// The zone's identity.
    public var zoneID: ID
    /// The key that seals the `encrypted` field values of the zone's records, wrapped by the
    /// account key (which only devices hold); `nil` for a zone without one.
    ///
    /// The server stores it as opaque bytes and keeps the first one a zone gets: saving a zone
    /// that has a key with another key answers the zone with the stored key, so that two devices
    /// creating the zone at once end up using the same one.
    ///
    /// In the shared database: the participant's own slot, the zone key wrapped by the
    /// participant's account key, which the participant sent when accepting (or again later).
    public var encryptionKey: EncryptionKey?
    /// In the shared database only: the zone's keys as the owner wrapped them to the participant's
    /// public key (with the share save's `participants[].encryptionKey`); absent until the owner
    /// has done so. Never in the private database.
    public var sharedKey: EncryptionKey?

    /// Creates a zone with the given ID and, optionally, its wrapped key.
    public init(zoneID: ID, encryptionKey: EncryptionKey? = nil, sharedKey: EncryptionKey? = nil) {
        self.zoneID = zoneID
        self.encryptionKey = encryptionKey
        self.sharedKey = sharedKey
    }

    /// Creates a zone owned by the signed-in user.
    public init(zoneName: String) {
        self.zoneID = ID(zoneName: zoneName)
    }

    private enum CodingKeys: String, CodingKey {
        case zoneID, encryptionKey, sharedKey
    }

    /// Decodes a zone; `encryptionKey` and `sharedKey` may be left out but not sent as `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        zoneID = try container.decode(ID.self, forKey: .zoneID)
        encryptionKey = try container.decodeIfPresentNotNull(EncryptionKey.self, forKey: .encryptionKey)
        sharedKey = try container.decodeIfPresentNotNull(EncryptionKey.self, forKey: .sharedKey)
    }
}
