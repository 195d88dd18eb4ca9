import Foundation
import NIOSSL
import PostgresNIO

/// A PostgreSQL address as people write it, and as libpq reads it:
/// `postgres://user[:password]@host[:port][,host2[:port2]…]/database[?sslmode=…&target_session_attrs=…]`,
/// or with `?host=/run/postgresql` for a Unix socket's directory. Several hosts are the nodes of one
/// cluster (what `pg_autoctl show uri` prints): the store writes to whichever of them takes writes.
struct PostgresAddress: Sendable, Equatable {
    struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        var host: String
        var port: Int
        /// A Unix socket's path instead of host and port.
        var socketPath: String?

        var description: String { socketPath ?? (host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)") }
    }

    enum TLSMode: String, Sendable, Equatable { case disable, prefer, require }

    /// Which node a connection is for (libpq's `target_session_attrs`).
    enum SessionAttributes: String, Sendable, Equatable {
        /// The first node that answers.
        case any
        /// A node that takes writes: not in recovery, and not read-only (libpq's `read-write`; `primary`
        /// is the same here, as the store only writes through it).
        case readWrite = "read-write"
        case primary
    }

    var endpoints: [Endpoint]
    var username: String
    var password: String?
    var database: String
    var tls: TLSMode
    var sessionAttributes: SessionAttributes

    /// Whether the store must find the node that takes writes among several, and find it again after a
    /// failover.
    var followsPrimary: Bool { endpoints.count > 1 }

    func clientConfiguration(_ endpoint: Endpoint) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let socketPath = endpoint.socketPath {
            configuration = PostgresClient.Configuration(
                unixSocketPath: socketPath, username: username, password: password, database: database)
        } else {
            let mode: PostgresClient.Configuration.TLS
            switch tls {
            case .disable: mode = .disable
            case .prefer: mode = .prefer(.makeClientConfiguration())
            case .require: mode = .require(.makeClientConfiguration())
            }
            configuration = PostgresClient.Configuration(
                host: endpoint.host, port: endpoint.port, username: username, password: password, database: database,
                tls: mode)
        }
        configuration.options.maximumConnections = 20
        return configuration
    }

    func connectionConfiguration(_ endpoint: Endpoint) throws -> PostgresConnection.Configuration {
        if let socketPath = endpoint.socketPath {
            return PostgresConnection.Configuration(
                unixSocketPath: socketPath, username: username, password: password, database: database)
        }
        let mode: PostgresConnection.Configuration.TLS
        switch tls {
        case .disable: mode = .disable
        case .prefer: mode = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: mode = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        return PostgresConnection.Configuration(
            host: endpoint.host, port: endpoint.port, username: username, password: password, database: database,
            tls: mode)
    }
}

enum PostgresURL {
    static func address(_ text: String) throws -> PostgresAddress {
        guard let (scheme, authority, tail) = parts(of: text),
            ["postgres://", "postgresql://"].contains(scheme.lowercased())
        else {
            throw problem(text, "it must start with postgres:// (postgres://user:password@host:port/database)")
        }
        let at = authority.lastIndex(of: "@")
        let hostList = at.map { authority[authority.index(after: $0)...] } ?? authority
        var endpoints: [PostgresAddress.Endpoint] = []
        for item in hostList.split(separator: ",", omittingEmptySubsequences: false) {
            endpoints.append(try endpoint(String(item), in: text))
        }
        // Everything else, as a URL with the first host alone.
        let single = scheme + (at.map { authority[...$0] } ?? "") + "placeholder" + tail
        guard let components = URLComponents(string: String(single)) else {
            throw problem(text, "it is not a URL (postgres://user:password@host:port/database)")
        }
        guard let username = components.percentEncodedUser?.removingPercentEncoding, !username.isEmpty else {
            throw problem(text, "it names no user (postgres://USER@host/database)")
        }
        let password = components.percentEncodedPassword?.removingPercentEncoding
        let database = String(components.path.drop { $0 == "/" }).removingPercentEncoding.flatMap {
            $0.isEmpty ? nil : $0
        }
        guard let database else { throw problem(text, "it names no database (postgres://user@host/DATABASE)") }
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
        let known = ["sslmode", "host", "target_session_attrs"]
        if let unknown = query.keys.sorted().first(where: { !known.contains($0) }) {
            throw problem(text, "'\(unknown)' is not a setting this server reads (\(known.joined(separator: ", ")))")
        }
        guard let tls = PostgresAddress.TLSMode(rawValue: query["sslmode"] ?? "prefer") else {
            throw problem(text, "sslmode '\(query["sslmode"] ?? "")' is not one of disable, prefer, require")
        }
        guard let attributes = PostgresAddress.SessionAttributes(rawValue: query["target_session_attrs"] ?? "any")
        else {
            throw problem(
                text,
                "target_session_attrs '\(query["target_session_attrs"] ?? "")' is not one of any, read-write, primary (the server writes: it never connects to a standby on purpose)"
            )
        }
        if let socketDirectory = query["host"], socketDirectory.hasPrefix("/") {
            guard endpoints.count == 1 else {
                throw problem(
                    text, "a Unix socket (host=\(socketDirectory)) goes with one node, not \(endpoints.count)")
            }
            let port = endpoints[0].port
            endpoints = [.init(host: "", port: port, socketPath: "\(socketDirectory)/.s.PGSQL.\(port)")]
        } else if endpoints.contains(where: { $0.host.isEmpty }) {
            throw problem(text, "it names no host (postgres://user@HOST:5432/database)")
        }
        return PostgresAddress(
            endpoints: endpoints, username: username, password: password, database: database, tls: tls,
            sessionAttributes: attributes)
    }

    /// One `host[:port]` of the list (an IPv6 address in brackets: `[::1]:5432`).
    private static func endpoint(_ item: String, in text: String) throws -> PostgresAddress.Endpoint {
        var host = item
        var portText: Substring?
        if item.hasPrefix("[") {
            guard let close = item.firstIndex(of: "]") else {
                throw problem(text, "'\(item)' opens an IPv6 address with [ and does not close it")
            }
            host = String(item[item.index(after: item.startIndex)..<close])
            let after = item[item.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw problem(text, "'\(item)' has something after its address") }
                portText = after.dropFirst()
            }
        } else if let colon = item.lastIndex(of: ":") {
            host = String(item[..<colon])
            portText = item[item.index(after: colon)...]
        }
        var port = 5432
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                throw problem(text, "'\(portText)' is not a port (1 to 65535)")
            }
            port = number
        }
        return .init(host: host.removingPercentEncoding ?? host, port: port)
    }

    /// The same address naming another database (every other part as written).
    static func replacingDatabase(in text: String, with database: String) throws -> String {
        _ = try address(text)
        let (scheme, authority, tail) = parts(of: text)!
        let query = tail.firstIndex(of: "?").map { tail[$0...] } ?? ""
        let encoded = database.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? database
        return scheme + authority + "/" + encoded + query
    }

    /// The scheme with its `://`, the authority (`user:password@host1:port1,host2:port2`) and what follows
    /// it (the path and query); nil without `://`. Cut here: Foundation's URL parser takes one host, and
    /// libpq's list has commas.
    private static func parts(of text: String) -> (scheme: Substring, authority: Substring, tail: Substring)? {
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        return (text[..<schemeEnd.upperBound], rest[..<authorityEnd], rest[authorityEnd...])
    }

    private static func problem(_ text: String, _ why: String) -> SchemaError {
        SchemaError(description: "the database address '\(redacted(text))' is not usable: \(why)")
    }

    /// The address without its password, for messages and logs.
    static func redacted(_ text: String) -> String {
        guard let (_, authority, _) = parts(of: text) else { return "?" }
        guard let at = authority.lastIndex(of: "@") else { return text }
        let userinfo = authority[..<at]
        guard let colon = userinfo.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":REDACTED" + String(text[at...])
    }
}
