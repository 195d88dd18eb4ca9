/// A password change: `PUT /v1/account/password`. Every other session of the account ends (their
/// push sockets close); the session that asked stays signed in.
public struct PasswordChange: Codable, Sendable, Hashable {
    public var oldPassword: String
    public var newPassword: String

    public init(oldPassword: String, newPassword: String) {
        self.oldPassword = oldPassword
        self.newPassword = newPassword
    }
}

/// One signed-in session of the account, as `GET /v1/account/sessions` lists it. Times are
/// milliseconds since 1970, as every date on the wire.
public struct SessionDescription: Codable, Sendable, Hashable {
    /// Names the session in `DELETE /v1/account/sessions/{id}`; not its token, nor derived from it.
    public var id: String
    /// What the device called itself when it signed in (`deviceLabel`), if anything.
    public var label: String?
    public var createdAt: Int64
    public var lastUsedAt: Int64
    /// The client address of the sign-in, or of the last request that moved ``lastUsedAt``.
    public var address: String?
    /// Whether this is the session of the request that listed them.
    public var isCurrent: Bool

    public init(
        id: String, label: String?, createdAt: Int64, lastUsedAt: Int64, address: String?, isCurrent: Bool
    ) {
        self.id = id
        self.label = label
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.address = address
        self.isCurrent = isCurrent
    }
}

/// The answer to `GET /v1/account/sessions`, newest first.
public struct SessionList: Codable, Sendable, Hashable {
    public var sessions: [SessionDescription]

    public init(sessions: [SessionDescription]) {
        self.sessions = sessions
    }
}

/// The answer to `POST /v1/account/sessions/end-others`.
public struct EndedSessions: Codable, Sendable, Hashable {
    /// How many sessions ended.
    public var ended: Int

    public init(ended: Int) {
        self.ended = ended
    }
}

/// `POST /v1/account/delete`: the account's password, asked again before everything goes.
public struct AccountDeletion: Codable, Sendable, Hashable {
    public var password: String

    public init(password: String) {
        self.password = password
    }
}

/// An account's storage: the bytes of its stored records' fields (later also assets) and its limit.
/// The answer to `GET /v1/account/usage`, and the `quota` of a `quotaExceeded` error.
public struct StorageUsage: Codable, Sendable, Hashable {
    public var usedBytes: Int64
    /// nil when the account has no limit.
    public var limitBytes: Int64?

    public init(usedBytes: Int64, limitBytes: Int64?) {
        self.usedBytes = usedBytes
        self.limitBytes = limitBytes
    }
}
