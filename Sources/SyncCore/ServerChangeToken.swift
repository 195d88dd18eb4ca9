import Foundation

/// An opaque marker of how far a client has read a database's or a zone's changes.
///
/// Mirrors `CKServerChangeToken`. Clients store it and hand it back; only the server reads it.
/// On the wire it is a base64 string.
public struct ServerChangeToken: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The token's bytes, meaningful only to the server that issued it.
    public let data: Data

    /// Wraps bytes issued by a server.
    public init(data: Data) {
        self.data = data
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "a change token must be the base64 string the server issued")
        }
        self.data = data
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(data.base64EncodedString())
    }

    public var description: String { "ServerChangeToken(\(data.base64EncodedString()))" }
}
