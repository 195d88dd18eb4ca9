/// One of the server's routes: a method and a path. This is the one list of them: the server's router,
/// the clients, the test client and the benchmarks all name a route by its endpoint.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// The HTTP methods the server's routes take.
    public enum Method: String, Sendable, Hashable {
        case get = "GET"
        case post = "POST"
        case put = "PUT"
        case delete = "DELETE"
    }

    public let method: Method
    /// The path, a parameter written `:name` (`/v1/databases/:scope/records/modify`).
    public let pattern: String

    init(_ method: Method, _ pattern: String) {
        self.method = method
        self.pattern = pattern
    }

    public var description: String { "\(method.rawValue) \(pattern)" }

    // MARK: Without a session

    public static let health = Endpoint(.get, "/v1/health")
    public static let limits = Endpoint(.get, "/v1/limits")
    public static let createAccount = Endpoint(.post, "/v1/accounts")
    public static let signIn = Endpoint(.post, "/v1/sessions")

    // MARK: The account

    public static let signOut = Endpoint(.delete, "/v1/sessions/current")
    public static let account = Endpoint(.get, "/v1/account")
    public static let changePassword = Endpoint(.put, "/v1/account/password")
    public static let deleteAccount = Endpoint(.post, "/v1/account/delete")
    public static let sessions = Endpoint(.get, "/v1/account/sessions")
    /// Parameter `id`: the session's.
    public static let endSession = Endpoint(.delete, "/v1/account/sessions/:id")
    public static let endOtherSessions = Endpoint(.post, "/v1/account/sessions/end-others")
    public static let usage = Endpoint(.get, "/v1/account/usage")
    public static let encryptionSettings = Endpoint(.get, "/v1/account/encryption")
    public static let createEncryptionSettings = Endpoint(.put, "/v1/account/encryption")
    public static let createKeyPair = Endpoint(.put, "/v1/account/encryption/key-pair")
    public static let changeEncryption = Endpoint(.post, "/v1/account/encryption/change")
    public static let resetEncryption = Endpoint(.post, "/v1/account/encryption/reset")
    public static let setUpRecovery = Endpoint(.put, "/v1/account/encryption/recovery")
    public static let openRecovery = Endpoint(.post, "/v1/account/encryption/recovery/open")
    /// The push socket (a WebSocket).
    public static let push = Endpoint(.get, "/v1/push")

    // MARK: A database (parameter `scope`: `private` or `shared`)

    public static let listZones = Endpoint(.post, "/v1/databases/:scope/zones/list")
    public static let modifyZones = Endpoint(.post, "/v1/databases/:scope/zones/modify")
    public static let fetchDatabaseChanges = Endpoint(.post, "/v1/databases/:scope/zones/changes")
    public static let modifyRecords = Endpoint(.post, "/v1/databases/:scope/records/modify")
    public static let fetchZoneChanges = Endpoint(.post, "/v1/databases/:scope/records/changes")
    public static let lookupRecords = Endpoint(.post, "/v1/databases/:scope/records/lookup")
    /// Parameter `assetID` too.
    public static let downloadAsset = Endpoint(.get, "/v1/databases/:scope/assets/:assetID")

    // MARK: Asset uploads (parameter `id`: the upload's)

    public static let createUpload = Endpoint(.post, "/v1/assets/uploads")
    public static let uploadStatus = Endpoint(.get, "/v1/assets/uploads/:id")
    public static let appendToUpload = Endpoint(.put, "/v1/assets/uploads/:id")

    // MARK: Sharing

    public static let lookupUsers = Endpoint(.post, "/v1/users/lookup")
    public static let saveShare = Endpoint(.post, "/v1/shares/save")
    public static let fetchShare = Endpoint(.post, "/v1/shares/fetch")
    public static let deleteShare = Endpoint(.post, "/v1/shares/delete")
    public static let shareMetadata = Endpoint(.post, "/v1/shares/metadata")
    public static let acceptShare = Endpoint(.post, "/v1/shares/accept")
    public static let declineShare = Endpoint(.post, "/v1/shares/decline")
    public static let invitations = Endpoint(.get, "/v1/shares/invitations")

    /// Every endpoint.
    public static let all: [Endpoint] = [
        health, limits, createAccount, signIn, signOut, account, changePassword, deleteAccount, sessions,
        endSession, endOtherSessions, usage, encryptionSettings, createEncryptionSettings, createKeyPair,
        changeEncryption, resetEncryption, setUpRecovery, openRecovery, push, listZones, modifyZones,
        fetchDatabaseChanges, modifyRecords,
        fetchZoneChanges, lookupRecords, downloadAsset, createUpload, uploadStatus, appendToUpload, lookupUsers,
        saveShare, fetchShare, deleteShare, shareMetadata, acceptShare, declineShare, invitations,
    ]

    /// The path with each `:name` replaced by `parameters[name]`, percent-encoded as one path segment.
    /// A parameter the path has and `parameters` lacks is a programming error.
    public func path(_ parameters: [String: String] = [:]) -> String {
        pattern.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            guard segment.hasPrefix(":") else { return String(segment) }
            guard let value = parameters[String(segment.dropFirst())] else {
                preconditionFailure("\(self) needs its parameter \(segment)")
            }
            return Self.encodedSegment(value)
        }.joined(separator: "/")
    }

    /// A database endpoint's path for `scope`.
    public func path(_ scope: DatabaseScope) -> String {
        path(["scope": scope.rawValue])
    }

    /// What every database endpoint's path starts with.
    public static var databasePaths: String { listZones.fixedPrefix }

    /// The path's leading part up to its first parameter: what a request to any of its paths starts with.
    public var fixedPrefix: String {
        String(pattern.prefix { $0 != ":" })
    }

    /// `value` with every byte but RFC 3986's unreserved ones percent-encoded.
    static func encodedSegment(_ value: String) -> String {
        var encoded = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return encoded
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
