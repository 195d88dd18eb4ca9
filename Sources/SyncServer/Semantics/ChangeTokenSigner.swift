import Crypto
import Foundation
import SyncCore
import Synchronization

/// Signs every change token the server hands out, and refuses one it did not sign.
///
/// A change token tells the server where a client's reading of a history stands: an owner, a zone,
/// a change number, the hierarchies a participant saw. Were it plain data, a client could write
/// its own (an older change number, no baseline) and be answered things it may not see, such as
/// the names and types of records deleted before it joined a share. So each token carries an
/// HMAC-SHA256 of its content under a key kept in the storage:
///
/// ```
/// 0x01 | key ID (4 bytes, big-endian) | HMAC-SHA256(0x01 | key ID | content) (32 bytes) | content
/// ```
///
/// A token that does not verify under a key still valid is answered `changeTokenExpired` with the
/// reason `changeTokenInvalid`: the client fetches again from the start of what it may see, which
/// is what it does for any expired token.
///
/// Keys rotate (``ChangeTokenKeyStore/rotateChangeTokenKey(now:previousValidUntil:)``): the new key
/// signs, the previous ones verify until their grace ends. Another instance, or an operator's
/// command, may rotate them; this signer reads them again every ``refreshInterval``, and at most
/// once every ``failureReloadInterval`` when a token names a key it does not know.
final class ChangeTokenSigner: Sendable {
    /// How old the keys in memory may get before they are read again.
    static let refreshInterval: Duration = .seconds(60)
    /// The least time between two reads caused by tokens that did not verify: a flood of forged
    /// tokens costs the storage one read a second at most.
    static let failureReloadInterval: Duration = .seconds(1)

    private static let format: UInt8 = 1
    private static let headerBytes = 1 + 4 + 32

    private struct Loaded {
        var keys: [ChangeTokenKey]
        var at: Duration
    }

    private let store: any ChangeTokenKeyStore
    private let clock: ServerClock
    private let loaded = Mutex<Loaded?>(nil)

    init(store: any ChangeTokenKeyStore, clock: ServerClock) {
        self.store = store
        self.clock = clock
    }

    /// The signed token of `position` (a cursor, encoded as JSON with sorted keys).
    func token(for position: some Encodable) async throws -> ServerChangeToken {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let content = try encoder.encode(position)
        var keys = try await keys(reloadingIfOlderThan: Self.refreshInterval)
        if !keys.contains(where: { $0.expiresAt == nil }) {
            keys = try await self.keys(reloadingIfOlderThan: Self.failureReloadInterval)
        }
        guard let key = keys.last(where: { $0.expiresAt == nil }) else {
            throw SyncError(.internalError, "the server has no key to sign change tokens with; try again later")
        }
        return ServerChangeToken(data: Self.sign(content, with: key))
    }

    /// The content of a token this server signed with a key still valid.
    ///
    /// - Throws: `changeTokenExpired` with reason `changeTokenInvalid` for any other token.
    func content(of token: ServerChangeToken) async throws -> Data {
        let data = token.data
        guard data.count > Self.headerBytes, data[data.startIndex] == Self.format else { throw Self.invalid }
        let id = data[(data.startIndex + 1)..<(data.startIndex + 5)].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        var keys = try await keys(reloadingIfOlderThan: Self.refreshInterval)
        if !keys.contains(where: { $0.id == id }) {
            // A key made since the last read (rotated on another instance), or a forgery.
            keys = try await self.keys(reloadingIfOlderThan: Self.failureReloadInterval)
        }
        guard let key = keys.first(where: { $0.id == id }), key.verifies(at: clock.now()),
            let content = Self.verified(data, with: key)
        else { throw Self.invalid }
        return content
    }

    /// The keys in memory, read again from the storage first when they are older than `age`.
    private func keys(reloadingIfOlderThan age: Duration) async throws -> [ChangeTokenKey] {
        let now = clock.elapsed()
        if let loaded = loaded.withLock({ $0 }), now - loaded.at < age {
            return loaded.keys
        }
        let keys = try await store.changeTokenKeys(now: clock.now())
        loaded.withLock { $0 = Loaded(keys: keys, at: now) }
        return keys
    }

    static func sign(_ content: Data, with key: ChangeTokenKey) -> Data {
        var header = Data([format])
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: key.id).bigEndian) { header.append(contentsOf: $0) }
        var mac = HMAC<SHA256>(key: SymmetricKey(data: key.secret))
        mac.update(data: header)
        mac.update(data: content)
        return header + Data(mac.finalize()) + content
    }

    /// The content of `data` if its MAC verifies under `key`, compared in constant time.
    private static func verified(_ data: Data, with key: ChangeTokenKey) -> Data? {
        let start = data.startIndex
        let header = data[start..<(start + 5)]
        let mac = data[(start + 5)..<(start + headerBytes)]
        let content = data[(start + headerBytes)...]
        guard
            HMAC<SHA256>.isValidAuthenticationCode(
                mac, authenticating: header + content, using: SymmetricKey(data: key.secret))
        else { return nil }
        return Data(content)
    }

    /// The answer to a token this server did not sign, or that was changed since.
    static var invalid: SyncError {
        var error = SyncError(
            .changeTokenExpired,
            "the change token was not issued by this server or was altered; fetch again without a token to start over")
        error.reason = .changeTokenInvalid
        return error
    }
}
