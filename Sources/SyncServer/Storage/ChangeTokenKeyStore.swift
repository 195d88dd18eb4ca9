import Foundation

/// A secret that signs the change tokens the server hands out (see ``ChangeTokenSigner``).
public struct ChangeTokenKey: Sendable, Hashable {
    /// Numbers keys in the order they were made; the newest key that is not retiring signs.
    public var id: Int64
    /// 32 random bytes, the HMAC-SHA256 key.
    public var secret: Data
    public var createdAt: Date
    /// When a rotated-out key stops verifying tokens; nil for a key not rotated out.
    public var expiresAt: Date?

    public init(id: Int64, secret: Data, createdAt: Date, expiresAt: Date?) {
        self.id = id
        self.secret = secret
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// Whether the key still verifies tokens at `date`.
    public func verifies(at date: Date) -> Bool {
        expiresAt.map { date < $0 } ?? true
    }

    /// A new key's secret: 32 bytes from the system's secure generator.
    static func randomSecret() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}

/// Where the change-token keys are kept: in the server's storage, so that every instance serving
/// one database signs and verifies with the same keys, and a restart keeps every token good.
public protocol ChangeTokenKeyStore: Sendable {
    /// Every key, oldest first. Creates the first key when there is none; of several instances
    /// starting at once, all end up with that one key.
    func changeTokenKeys(now: Date) async throws -> [ChangeTokenKey]
    /// Makes a new key, which signs from now on; every older key verifies until `previousValidUntil`
    /// at the latest (a key already retiring sooner keeps its sooner end). Returns the new key.
    @discardableResult
    func rotateChangeTokenKey(now: Date, previousValidUntil: Date) async throws -> ChangeTokenKey
}
