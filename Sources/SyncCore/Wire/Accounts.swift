import Foundation

/// A username and password, to create an account or sign in.
public struct AccountCredentials: Codable, Sendable, Hashable {
    public var username: String
    public var password: String
    /// At sign-in: what the device calls itself ("laptop"), shown in the account's session list.
    /// At most 100 characters; ignored at account creation.
    public var deviceLabel: String?

    public init(username: String, password: String, deviceLabel: String? = nil) {
        self.username = username
        self.password = password
        self.deviceLabel = deviceLabel
    }

    private enum CodingKeys: String, CodingKey {
        case username, password, deviceLabel
    }

    /// Decodes credentials; `deviceLabel` may be left out but is never `null`, as no request member is.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        username = try container.decode(String.self, forKey: .username)
        password = try container.decode(String.self, forKey: .password)
        deviceLabel = try container.decodeIfPresentNotNull(String.self, forKey: .deviceLabel)
    }
}

/// Who an account is: the answer to `GET /v1/account` and to creating an account.
public struct AccountInfo: Codable, Sendable, Hashable {
    /// The user's record name: the account's stable identity (CloudKit's user record ID).
    public var userRecordName: String
    public var username: String
    /// The account's X25519 public key (32 bytes), once one of its devices published a key pair;
    /// sharing wraps a zone's key to it. Absent for an account without one.
    public var publicKey: Data?

    public init(userRecordName: String, username: String, publicKey: Data? = nil) {
        self.userRecordName = userRecordName
        self.username = username
        self.publicKey = publicKey
    }

    private enum CodingKeys: String, CodingKey {
        case userRecordName, username, publicKey
    }

    /// Decodes an identity; `publicKey` may be left out, and one that is not 32 bytes is refused.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        userRecordName = try container.decode(String.self, forKey: .userRecordName)
        username = try container.decode(String.self, forKey: .username)
        publicKey = try container.decodeIfPresentNotNull(Data.self, forKey: .publicKey)
        if let publicKey, let problem = AccountKeyPair.problem(publicKey: publicKey) {
            throw DecodingError.dataCorruptedError(forKey: .publicKey, in: container, debugDescription: problem)
        }
    }
}

/// A signed-in session: the bearer token to send as `Authorization: Bearer <token>`.
public struct SessionInfo: Codable, Sendable, Hashable {
    public var token: String
    public var userRecordName: String

    public init(token: String, userRecordName: String) {
        self.token = token
        self.userRecordName = userRecordName
    }
}

/// The answer to `GET /v1/health`.
public struct HealthInfo: Codable, Sendable, Hashable {
    public var status: String
    public var version: String

    public init(status: String, version: String) {
        self.status = status
        self.version = version
    }
}
