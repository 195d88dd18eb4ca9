import ContactsLocal
import Crypto
import Foundation
import SyncCore

/// The user name and password DAV clients give the bridge (HTTP Basic): made on the bridge's first start,
/// kept in the data directory beside the device (`devices/<device>.dav-password`, 0600), and shown by
/// `contacts dav --show-credentials`. The password is 128 random bits; it opens this device's contacts, never
/// the account (it is not the account's password, and the server never sees it).
public struct BridgeCredentials: Sendable, Hashable {
    public static let username = "contacts"

    public var username: String
    public var password: String

    /// Where the device's bridge password is kept.
    public static func path(dataDirectory: String, device: String) -> String {
        DataDirectory.Layout(dataDirectory).davPassword(device)
    }

    /// The device's credentials, made (and kept) when there are none yet.
    public static func load(dataDirectory: String, device: String) throws -> BridgeCredentials {
        let path = path(dataDirectory: dataDirectory, device: device)
        if FileManager.default.fileExists(atPath: path) {
            let text = String(decoding: try PrivateFile.read(path), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard text.count >= 16 else {
                throw BridgeError.damagedPasswordFile(path)
            }
            return BridgeCredentials(username: username, password: text)
        }
        var generator = SystemRandomNumberGenerator()
        let password = Hexadecimal.lowercase((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try PrivateFile.create(path, contents: Array((password + "\n").utf8))
        return BridgeCredentials(username: username, password: password)
    }

    /// Whether an `Authorization` header carries these credentials (compared in constant time).
    func accepts(authorization: String?) -> Bool {
        guard let authorization, authorization.count < 1024,
            authorization.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(authorization.dropFirst(6)).trimmingCharacters(in: .whitespaces))
        else { return false }
        let expected = Data("\(username):\(password)".utf8)
        // Hashes of equal length, compared without an early exit.
        let a = SHA256.hash(data: decoded)
        let b = SHA256.hash(data: expected)
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
