import Foundation
import LocalSystem
import SyncCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where a sync server listens, read from its URL, and the checks made before anything secret is
/// sent there.
///
/// | URL | endpoint |
/// |---|---|
/// | `https://host:port` | TCP with TLS, verified against ``TransportSecurity/caFile`` or the system's roots |
/// | `http://host:port` | plain TCP: a token or password goes there only when the host is loopback, or when ``TransportSecurity/allowsInsecureHTTP`` |
/// | `http+unix://<percent-encoded socket path>` | a Unix domain socket, used only when its directory belongs to this user and grants nothing to group or others |
///
/// A Unix socket is how a user's own local server is reached: nobody else on the machine can listen
/// in a directory only its owner can enter, so a client that checks the directory first cannot hand
/// its token to a program squatting where the server used to be (as a stopped server's TCP port
/// could be taken by any local user).
package enum ServerEndpoint: Equatable, Sendable, CustomStringConvertible {
    case tcp(host: String, port: Int, tls: Bool)
    case unixSocket(path: String)

    /// The scheme of URLs naming a Unix socket, as AsyncHTTPClient reads them.
    package static let unixScheme = "http+unix"

    /// The URL of a server listening on the Unix socket at `path`.
    package static func url(unixSocketPath path: String) -> URL {
        // The whole path is one host name: every "/" percent-encoded.
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let host = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
        return URL(string: "\(unixScheme)://\(host)")!
    }

    /// The endpoint `url` names; throws `invalidArguments`, saying which URLs work, for anything else.
    package init(_ url: URL) throws {
        let scheme = url.scheme?.lowercased()
        switch scheme {
        case "http", "https":
            guard let host = url.host, !host.isEmpty else {
                throw SyncError(.invalidArguments, "the server URL \(url.absoluteString) names no host")
            }
            self = .tcp(host: host, port: url.port ?? (scheme == "https" ? 443 : 80), tls: scheme == "https")
        case Self.unixScheme:
            // URL.host decodes percent escapes; the raw text keeps what was written.
            guard let encoded = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedHost,
                let path = encoded.removingPercentEncoding, path.hasPrefix("/")
            else {
                throw SyncError(
                    .invalidArguments,
                    "the server URL \(url.absoluteString) names no socket: write http+unix:// followed by the socket's absolute path, percent-encoded (%2F for each /)"
                )
            }
            self = .unixSocket(path: path)
        default:
            throw SyncError(
                .invalidArguments,
                "the server URL \(url.absoluteString) is not http://, https:// or http+unix://; use one of those")
        }
    }

    /// The endpoint for messages: `host:port`, or the socket's path.
    package var description: String {
        switch self {
        case .tcp(let host, let port, let tls): "\(tls ? "https" : "http")://\(host):\(port)"
        case .unixSocket(let path): "the socket \(path)"
        }
    }

    /// Whether traffic to this endpoint stays on this machine or is encrypted.
    package var isProtected: Bool {
        switch self {
        case .unixSocket: true
        case .tcp(_, _, let tls): tls || Self.isLoopback(host)
        }
    }

    private var host: String {
        if case .tcp(let host, _, _) = self { return host }
        return ""
    }

    /// `localhost`, `127.0.0.0/8` and `::1`: addresses whose traffic never leaves the machine.
    package static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return bare.lowercased() == "localhost" || HostAddresses.isLoopback(numeric: bare)
    }

    /// Checks that a request may go to this endpoint now; throws a `networkFailure` saying what is
    /// wrong and how to fix it otherwise. A Unix socket is checked before every request; a TCP
    /// address only before requests that carry a token or password (`sendingSecrets`). Checked
    /// each time, not once: a directory's mode can change while an app runs.
    package func verify(sendingSecrets: Bool, _ security: TransportSecurity) throws {
        switch self {
        case .unixSocket(let path):
            if let problem = Self.problem(withSocketDirectoryOf: path) {
                throw SyncError(.networkFailure, "refusing to talk to the server socket \(path): \(problem)")
            }
        case .tcp(let host, _, _):
            guard sendingSecrets, !isProtected, !security.allowsInsecureHTTP else { return }
            throw SyncError(
                .networkFailure,
                "refusing to send a password or token over plain http:// to \(host), which is not this machine: anyone on the network could read it. Use an https:// server URL, or allow plain HTTP explicitly if the network is yours (SYNCKIT_ALLOW_INSECURE_HTTP=1)"
            )
        }
    }

    /// What makes the directory of the socket at `path` unsafe to trust, or nil when only this user
    /// can have put a socket there: the directory is a real directory (not a symbolic link), owned
    /// by this user, and grants nothing to group or others.
    package static func problem(withSocketDirectoryOf path: String) -> String? {
        let directory = (path as NSString).deletingLastPathComponent
        let status: FileStatus
        do {
            status = try FileStatus.of(directory)
        } catch {
            return "its directory \(directory) cannot be read (\(error.reason))"
        }
        if status.kind == .symbolicLink {
            return "its directory \(directory) is a symbolic link; only a real directory of your own is trusted"
        }
        guard status.kind == .directory else { return "\(directory) is not a directory" }
        guard status.isOwnedByThisUser else {
            return
                "its directory \(directory) belongs to user ID \(status.owner), not to you (\(geteuid())); another user could be listening there"
        }
        guard status.bitsForOthers == 0 else {
            return
                "its directory \(directory) has mode \(String(status.mode & 0o777, radix: 8)), which lets group or others in; run chmod 700 \(directory)"
        }
        return nil
    }
}
