import Foundation
import GRDB
import Logging
import PostgresNIO
import SyncCore
import SyncTesting
import Testing

@testable import SyncServer

/// A server upgraded to the account lifecycle keeps every session signed in: storage at the schema
/// before it (SQLite v7, PostgreSQL 4) with a session of Ada's is migrated by a server that then
/// accepts the session's token, lists it with an ID of its own, and can end it.
@Suite("Upgrades: sessions made before the account lifecycle")
struct AccountLifecycleUpgradeTests {
    static let token = "token-issued-before-the-upgrade"

    /// The rows of the earlier schema, as its server wrote them.
    private static func earlierRows(_ sql: EarlierSchema.Dialect) -> [String] {
        let hash = AuthenticationMiddleware.hash(token: token)
        let account = sql.account("_ada", "ada")
        // Used an hour ago: well inside both lifetimes.
        let used = Date().addingTimeInterval(-3600).millisecondsSince1970
        return [
            account,
            """
            INSERT INTO session (token_hash, user_record_name, created_at, last_used_at)
            VALUES ('\(hash)', '_ada', \(used), \(used))
            """,
        ]
    }

    @Test("SQLite: a file at schema 4 keeps its sessions signed in")
    func sqlite() async throws {
        try await EarlierSchema.withSQLite(at: 4, rows: Self.earlierRows) { path in
            try await TestServer.$backend.withValue(.sqlite) { try await check(storagePath: path) }
        }
    }

    @Test(
        "PostgreSQL: a database at schema 4 keeps its sessions signed in",
        .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
    func postgres() async throws {
        let path = "lifecycle-upgrade-\(UUID())"
        let name = TestPostgres.databaseName(for: path)
        try await TestPostgres.createDatabase(name)
        do {
            try await EarlierSchema.preparePostgres(
                url: try TestPostgres.url(database: name), at: 4, rows: Self.earlierRows)
            try await TestServer.$backend.withValue(.postgres) { try await check(storagePath: path) }
            try await TestPostgres.dropDatabase(name)
        } catch {
            try? await TestPostgres.dropDatabase(name)
            throw error
        }
    }

    /// Serves the upgraded storage and checks the earlier session from a client's side.
    private func check(storagePath: String) async throws {
        let server = try await TestServer.start(storagePath: storagePath, transport: .inProcess)
        do {
            let accounts = AccountClient(serverURL: try #require(URL(string: server.baseURL)))
            #expect(try await accounts.account(token: Self.token).username == "ada")
            let sessions = try await accounts.sessions(token: Self.token)
            #expect(sessions.count == 1)
            let session = try #require(sessions.first)
            #expect(session.isCurrent && session.label == nil)
            #expect(session.id.count == 32 && session.id.allSatisfy(\.isHexDigit), "\(session.id)")
            try await accounts.endSession(token: Self.token, id: session.id)
            #expect(await syncError { _ = try await accounts.account(token: Self.token) }?.code == .notAuthenticated)
            try await server.stop()
        } catch {
            try? await server.stop()
            throw error
        }
    }
}
