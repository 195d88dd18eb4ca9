import Foundation

extension RecordZone {
    /// A zone's data key as the server keeps it: wrapped (sealed) by the account key, which the
    /// server never has, so the server can store it but not use it.
    ///
    /// On the wire: `{"keyVersion": 1, "wrappedKey": "<base64>"}`. Decoding checks both members,
    /// so a value from the network is within its limits before anything stores or reads it.
    public struct EncryptionKey: Codable, Sendable, Hashable {
        /// The versions a key may have: from 1 to the largest 32-bit signed integer, which every
        /// client's integers hold.
        public static let keyVersionRange: ClosedRange<Int> = 1...Int(Int32.max)
        /// The lengths a wrapped key may have, in bytes: room for a chain of every version of a
        /// zone's key (a few hundred versions), small enough that a zone listing stays small.
        public static let wrappedKeyByteCountRange: ClosedRange<Int> = 1...16384

        /// The generation of the zone's key, from 1.
        public var keyVersion: Int
        /// The zone key sealed by the account key; opaque to the server.
        public var wrappedKey: Data

        /// Creates a wrapped key. Values outside ``keyVersionRange`` or ``wrappedKeyByteCountRange``
        /// are refused where they are decoded (the server refuses them with `invalidArguments`).
        public init(keyVersion: Int, wrappedKey: Data) {
            self.keyVersion = keyVersion
            self.wrappedKey = wrappedKey
        }

        private enum CodingKeys: String, CodingKey {
            case keyVersion, wrappedKey
        }

        /// Decodes a wrapped key, refusing a version or length outside its range.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            keyVersion = try container.decode(Int.self, forKey: .keyVersion)
            wrappedKey = try container.decode(Data.self, forKey: .wrappedKey)
            if let problem = Self.problem(keyVersion: keyVersion) {
                throw DecodingError.dataCorruptedError(forKey: .keyVersion, in: container, debugDescription: problem)
            }
            if let problem = Self.problem(wrappedKey: wrappedKey) {
                throw DecodingError.dataCorruptedError(forKey: .wrappedKey, in: container, debugDescription: problem)
            }
        }

        /// Why `keyVersion` cannot be a key's version, or nil if it can.
        public static func problem(keyVersion: Int) -> String? {
            keyVersionRange.contains(keyVersion)
                ? nil
                : "\(keyVersion) is not a key version; send one from \(keyVersionRange.lowerBound) to \(keyVersionRange.upperBound)"
        }

        /// Why `wrappedKey` cannot be a wrapped key, or nil if it can.
        public static func problem(wrappedKey: Data) -> String? {
            wrappedKeyByteCountRange.contains(wrappedKey.count)
                ? nil
                : "the wrapped key is \(wrappedKey.count) bytes long; send \(wrappedKeyByteCountRange.lowerBound) to \(wrappedKeyByteCountRange.upperBound) bytes of base64"
        }
    }
}
