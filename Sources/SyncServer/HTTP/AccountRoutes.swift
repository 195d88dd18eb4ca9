import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdBcrypt
import SyncCore

/// Account creation, sign-in and sign-out.
///
/// Password guessing is slow: failed sign-ins are throttled per username and per address
/// (``SignInThrottle``), and bcrypt runs a few at a time (``PasswordHashingQueue``).
struct AccountRoutes {
    let store: any RecordStore
    let pushHub: PushHub
    let configuration: SyncServerConfiguration
    let body: BodyCoding
    private let throttle: SignInThrottle
    private let hashing: PasswordHashingQueue
    /// Checked against when the username is unknown, at the same cost as real hashes, so that
    /// the time an answer takes does not reveal which usernames exist.
    private let dummyHash: String

    init(store: any RecordStore, pushHub: PushHub, configuration: SyncServerConfiguration, body: BodyCoding) {
        self.store = store
        self.pushHub = pushHub
        self.configuration = configuration
        self.body = body
        throttle = SignInThrottle(
            usernames: configuration.usernameSignInThrottle, addresses: configuration.addressSignInThrottle,
            clock: configuration.clock)
        hashing = PasswordHashingQueue(configuration.passwordHashing)
        dummyHash = Bcrypt.hash(Self.prehash("no such user"), cost: configuration.bcryptCost)
    }

    func createAccount(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let credentials = try await body.decode(AccountCredentials.self, from: request)
        if let problem = NameRules.problem(withUsername: credentials.username) {
            throw SyncError(.invalidArguments, problem)
        }
        try Self.validate(password: credentials.password)
        let passwordHash = try await hash(password: credentials.password)
        let account = StoredAccount(
            userRecordName: "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased(),
            username: credentials.username, passwordHash: passwordHash, createdAt: configuration.clock.now())
        try await store.createAccount(account)
        return try body.response(
            AccountInfo(userRecordName: account.userRecordName, username: account.username), status: .created)
    }

    func signIn(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let credentials = try await body.decode(AccountCredentials.self, from: request)
        let address = context.remoteAddress
        try checkThrottle(username: credentials.username, address: address)
        let account = try await store.account(username: credentials.username)
        let storedHash = account?.passwordHash ?? dummyHash
        let matches = try await hashing.run(
            // Failures recorded while this attempt waited its turn count too.
            afterWaiting: { try checkThrottle(username: credentials.username, address: address) },
            { Bcrypt.verify(Self.prehash(credentials.password), hash: storedHash) })
        guard let account, matches else {
            throttle.recordFailure(username: credentials.username, address: address)
            throw SyncError(.notAuthenticated, "the username or password is wrong")
        }
        throttle.recordSuccess(username: credentials.username)
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
        let token = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        try await store.createSession(
            tokenHash: AuthenticationMiddleware.hash(token: token), userRecordName: account.userRecordName,
            createdAt: configuration.clock.now())
        return try body.response(
            SessionInfo(token: token, userRecordName: account.userRecordName), status: .created)
    }

    func signOut(_ request: Request, context: SyncRequestContext) async throws -> Response {
        if let tokenHash = context.sessionTokenHash {
            try await store.deleteSession(tokenHash: tokenHash)
            await pushHub.closeSession(tokenHash)
        }
        return Response(status: .noContent)
    }

    func account(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        guard let account = try await store.account(userRecordName: user) else {
            throw SyncError(.notAuthenticated, "the account no longer exists")
        }
        return try body.response(AccountInfo(userRecordName: account.userRecordName, username: account.username))
    }

    private func hash(password: String) async throws -> String {
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
