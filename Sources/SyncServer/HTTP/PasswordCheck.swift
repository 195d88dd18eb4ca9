import Crypto
import Foundation
import HummingbirdBcrypt
import SyncCore

/// Checks passwords the one way the server does: throttled per username and per client address
/// (``SignInThrottle``), bcrypt a few at a time (``PasswordHashingQueue``), and as slow for an
/// unknown username as for a known one. Sign-in, the password change and account deletion share
/// one, so that guesses through any of them count together.
final class PasswordCheck: Sendable {
    private let store: any RecordStore
    private let configuration: SyncServerConfiguration
    private let throttle: SignInThrottle
    private let hashing: PasswordHashingQueue
    /// Checked against when the username is unknown, at the same cost as real hashes, so that
    /// the time an answer takes does not reveal which usernames exist.
    private let dummyHash: String

    init(store: any RecordStore, configuration: SyncServerConfiguration) {
        self.store = store
        self.configuration = configuration
        throttle = SignInThrottle(
            usernames: configuration.usernameSignInThrottle, addresses: configuration.addressSignInThrottle,
            clock: configuration.clock)
        hashing = PasswordHashingQueue(configuration.passwordHashing)
        dummyHash = Bcrypt.hash(Self.prehash("no such user"), cost: configuration.bcryptCost)
    }

    /// The account with this username when `password` is its password; nil otherwise, after
    /// counting the failure. Throws `requestRateLimited` while the username or the address must
    /// wait after failures (the right password then goes unchecked too).
    func account(username: String, password: String, address: String) async throws -> StoredAccount? {
        try checkThrottle(username: username, address: address)
        let account = try await store.account(username: username)
        let storedHash = account?.passwordHash ?? dummyHash
        let matches = try await hashing.run(
            // Failures recorded while this attempt waited its turn count too.
            afterWaiting: { try checkThrottle(username: username, address: address) },
            { Bcrypt.verify(Self.prehash(password), hash: storedHash) })
        guard let account, matches else {
            throttle.recordFailure(username: username, address: address)
            return nil
        }
        throttle.recordSuccess(username: username)
        return account
    }

    /// A new password's bcrypt hash, computed through the queue.
    func hash(password: String) async throws -> String {
        let cost = configuration.bcryptCost
        return try await hashing.run { Bcrypt.hash(Self.prehash(password), cost: cost) }
    }

    /// Throws `requestRateLimited` while the username or the address must wait after failures.
    /// The message is the same for known and unknown usernames.
    private func checkThrottle(username: String, address: String) throws {
        if let wait = throttle.wait(username: username, address: address) {
            throw SyncError(
                .requestRateLimited,
                "too many failed sign-ins for this username or from this address; retry in \(AuthenticationMiddleware.format(wait)) s",
                retryAfter: wait)
        }
    }

    /// Refuses a new password the server would not accept at account creation.
    static func validate(password: String) throws {
        if password.count < 8 {
            throw SyncError(.invalidArguments, "the password is shorter than 8 characters; choose a longer one")
        }
        if password.utf8.count > 1024 {
            throw SyncError(.invalidArguments, "the password is longer than 1024 bytes; choose a shorter one")
        }
    }

    /// bcrypt reads only 72 bytes; hashing first lets every byte of a long password count.
    static func prehash(_ password: String) -> String {
        Data(SHA256.hash(data: Data(password.utf8))).base64EncodedString()
    }
}
