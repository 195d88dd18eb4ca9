import Foundation
import PostgresNIO

/// Reads a PostgreSQL address as people write it:
/// `postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require]`, or with
/// `?host=/run/postgresql` for a Unix socket's directory.
enum PostgresURL {
    static func configuration(_ text: String) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: text), ["postgres", "postgresql"].contains(components.scheme)
        else {
            throw problem(text, "it must start with postgres:// (postgres://user:password@host:port/database)")
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
        if let unknown = query.keys.first(where: { !["sslmode", "host"].contains($0) }) {
            throw problem(text, "'\(unknown)' is not a setting this server reads (sslmode, host)")
        }
        let tls: PostgresClient.Configuration.TLS
        switch query["sslmode"] ?? "prefer" {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        case let other: throw problem(text, "sslmode '\(other)' is not one of disable, prefer, require")
        }
        var configuration: PostgresClient.Configuration
        if let socketDirectory = query["host"], socketDirectory.hasPrefix("/") {
            let port = components.port ?? 5432
            configuration = PostgresClient.Configuration(
                unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: username, password: password,
                database: database)
        } else {
            guard let host = components.host, !host.isEmpty else {
                throw problem(text, "it names no host (postgres://user@HOST:5432/database)")
            }
            configuration = PostgresClient.Configuration(
                host: host, port: components.port ?? 5432, username: username, password: password,
                database: database, tls: tls)
        }
        configuration.options.maximumConnections = 20
        return configuration
    }

    private static func problem(_ text: String, _ why: String) -> SchemaError {
        SchemaError(description: "the database address '\(redacted(text))' is not usable: \(why)")
    }

    /// The address without its password, for messages and logs.
    static func redacted(_ text: String) -> String {
        var shown = URLComponents(string: text)
        if shown?.password != nil { shown?.password = "REDACTED" }
        return shown?.string ?? "?"
    }
}
