import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdBcrypt
import NIOPosix
import SyncCore

/// Account creation, sign-in and sign-out.
struct AccountRoutes {
    let store: any RecordStore
    let configuration: SyncServerConfiguration
    let body: BodyCoding
    /// Checked against when the username is unknown, at the same cost as real hashes, so that
    /// the time an answer takes does not reveal which usernames exist.
    private let dummyHash: String

    init(store: any RecordStore, configuration: SyncServerConfiguration, body: BodyCoding) {
        self.store = store
        self.configuration = configuration
        self.body = body
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
            username: credentials.username, passwordHash: passwordHash, createdAt: Date())
        try await store.createAccount(account)
        return try body.response(
            AccountInfo(userRecordName: account.userRecordName, username: account.username), status: .created)
    }

    func signIn(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let credentials = try await body.decode(AccountCredentials.self, from: request)
        let account = try await store.account(username: credentials.username)
        let storedHash = account?.passwordHash ?? dummyHash
        let matches = try await NIOThreadPool.singleton.runIfActive {
            Bcrypt.verify(Self.prehash(credentials.password), hash: storedHash)
        }
        guard let account, matches else {
            throw SyncError(.notAuthenticated, "the username or password is wrong")
        }
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
        let token = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        try await store.createSession(
            tokenHash: AuthenticationMiddleware.hash(token: token), userRecordName: account.userRecordName,
            createdAt: Date())
        return try body.response(
            SessionInfo(token: token, userRecordName: account.userRecordName), status: .created)
    }

    func signOut(_ request: Request, context: SyncRequestContext) async throws -> Response {
        if let tokenHash = context.sessionTokenHash {
            try await store.deleteSession(tokenHash: tokenHash)
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
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(Self.prehash(password), cost: cost) }
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
