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

    /// Creates a zone with the given ID.
    public init(zoneID: ID) {
        self.zoneID = zoneID
    }

    /// Creates a zone owned by the signed-in user.
    public init(zoneName: String) {
        self.zoneID = ID(zoneName: zoneName)
    }
}
