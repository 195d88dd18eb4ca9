import Foundation
import HTTPTypes
import Hummingbird
import SyncCore

/// Account creation, sign-in and sign-out.
///
/// Password guessing is slow: failed sign-ins are throttled per username and per address, and
/// bcrypt runs a few at a time (``PasswordCheck``).
struct AccountRoutes {
    let store: any RecordStore
    let pushHub: PushHub
    let configuration: SyncServerConfiguration
    let body: BodyCoding
    /// Shared with the routes that ask for the password again (``AccountLifecycleRoutes``).
    let passwords: PasswordCheck

    /// The longest device label a session keeps.
    static let maximumLabelLength = 100

    init(store: any RecordStore, pushHub: PushHub, configuration: SyncServerConfiguration, body: BodyCoding) {
        self.store = store
        self.pushHub = pushHub
        self.configuration = configuration
        self.body = body
        passwords = PasswordCheck(store: store, configuration: configuration)
    }

    func createAccount(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let credentials = try await body.decode(AccountCredentials.self, from: request)
        if let problem = NameRules.problem(withUsername: credentials.username) {
            throw SyncError(.invalidArguments, problem)
        }
        try PasswordCheck.validate(password: credentials.password)
        let passwordHash = try await passwords.hash(password: credentials.password)
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
        guard
            let account = try await passwords.account(
                username: credentials.username, password: credentials.password, address: address)
        else {
            throw SyncError(.notAuthenticated, "the username or password is wrong")
        }
        // Checked after the password, so that a wrong password gets the same answer whatever the label.
        let label = try Self.label(credentials.deviceLabel)
        // Said only to whoever knows the password: a guesser learns nothing of the account's state.
        if account.isDisabled { throw SessionRefusal.error(for: .accountDisabled) }
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
        let token = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        let now = configuration.clock.now()
        try await store.createSession(
            StoredSession(
                userRecordName: account.userRecordName, createdAt: now, lastUsedAt: now, id: StoredSession.newID(),
                label: label, address: address),
            tokenHash: AuthenticationMiddleware.hash(token: token))
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
            throw SessionRefusal.error(for: .accountDeleted)
        }
        return try body.response(
            AccountInfo(
                userRecordName: account.userRecordName, username: account.username,
                publicKey: try await store.publicKey(owner: account.userRecordName)))
    }

    /// A sign-in's device label as kept: nil for none or an empty one. Refuses one that is too
    /// long or holds control or formatting characters (a bidi override would disguise it in a
    /// terminal's list of sessions).
    static func label(_ label: String?) throws -> String? {
        guard let label, !label.isEmpty else { return nil }
        guard label.count <= maximumLabelLength else {
            throw SyncError(
                .invalidArguments,
                "deviceLabel: a device label is at most \(maximumLabelLength) characters; this one has \(label.count)")
        }
        if label.unicodeScalars.contains(where: {
            $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
                || $0.properties.generalCategory == .lineSeparator
                || $0.properties.generalCategory == .paragraphSeparator
        }) {
            throw SyncError(
                .invalidArguments,
                "deviceLabel: a device label may not hold control or formatting characters; use plain text such as 'laptop'"
            )
        }
        return label
    }
}
