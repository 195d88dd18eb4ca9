import Foundation
import SyncCore
import SyncCrypto

/// What an owner hands to the people they share a zone with: the share's URL (CKShare's `url`).
///
/// `http://server:8080/share/<token>#<key>`: the token names the share on the server; the part
/// after `#`, present when the zone has encrypted values, opens the zone's key and never reaches
/// the server (clients do not send a URL's fragment).
public struct ShareInvitation: Sendable, Hashable, CustomStringConvertible {
    /// The server the share lives on.
    public var serverURL: URL
    /// The share's token.
    public var token: String
    /// The secret that opens the zone's key, for a zone with encrypted values.
    public var secret: InvitationSecret?

    public init(serverURL: URL, token: String, secret: InvitationSecret?) {
        self.serverURL = serverURL
        self.token = token
        self.secret = secret
    }

    /// Reads an invitation as ``description`` writes it.
    public init(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let malformed = SyncError(
            .invalidArguments,
            "'\(trimmed)' is not a share invitation; one looks like http://host:port/share/TOKEN#KEY, as `share` printed it"
        )
        guard let components = URLComponents(string: trimmed), let scheme = components.scheme,
            ["http", "https"].contains(scheme.lowercased()), components.host?.isEmpty == false
        else { throw malformed }
        var parts = components.path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[parts.count - 2] == "share" else { throw malformed }
        token = String(parts.removeLast())
        parts.removeLast()
        var server = components
        server.path = parts.isEmpty ? "" : "/" + parts.joined(separator: "/")
        server.fragment = nil
        server.query = nil
        guard let url = server.url else { throw malformed }
        serverURL = url
        if let fragment = components.fragment, !fragment.isEmpty {
            guard let bytes = Data(base64URL: fragment) else { throw malformed }
            do {
                secret = try InvitationSecret(rawBytes: bytes)
            } catch let error as EncryptionError {
                throw SyncError(.invalidArguments, error.message)
            }
        } else {
            secret = nil
        }
    }

    public var description: String {
        var text = serverURL.absoluteString
        if text.hasSuffix("/") { text.removeLast() }
        text += "/share/\(token)"
        if let secret { text += "#" + secret.rawBytes.base64URLEncoded }
        return text
    }
}

extension Data {
    /// URL-safe base64 without padding (RFC 4648 §5).
    var base64URLEncoded: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
