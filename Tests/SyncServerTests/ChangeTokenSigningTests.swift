import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// Change tokens are signed by the server (HMAC-SHA256 under a key kept in the storage): a token a
/// client made or changed is refused as expired, with the reason `changeTokenInvalid`, and tells
/// nothing; keys rotate with a grace period; every instance of one database shares them.
@Suite("Signed change tokens", .onEveryBackend)
struct ChangeTokenSigningTests {
    /// The JSON content of a signed token (after its format byte, key ID and MAC).
    private static let headerBytes = 1 + 4 + 32

    private static func content(_ token: ServerChangeToken) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: token.data.dropFirst(headerBytes)) as? [String: Any])
    }

    /// The ID of the key that signed `token`.
    private static func keyID(_ token: ServerChangeToken) -> Int {
        token.data.dropFirst().prefix(4).reduce(0) { $0 << 8 | Int($1) }
    }

    /// `object` as sorted-key JSON.
    private static func json(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: .sortedKeys)
    }

    private static func isInvalid(_ error: SyncError?) -> Bool {
        error?.code == .changeTokenExpired && error?.reason == .changeTokenInvalid
    }

    @Test(
        "a participant's crafted token (older sequence, no baseline) is refused, and names nothing deleted before they joined"
    )
    func craftedTokenRevealsNothing() async throws {
        try await withServer { _, anonymous in
            var home = try await Household(anonymous)
            let share = try await home.share("Groceries", with: [(home.graceID, .readWrite)])
            // Before Grace joins: Organic is deleted from the hierarchy she will see.
            _ = try await home.ada.modifyRecords(
                ModifyRecordsRequest(deletes: [RecordValue.ID(recordName: "Organic", zoneID: Household.zone)]))
            try await home.grace.acceptShare(token: share.token)
            let first = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)
            #expect(first.deletions.isEmpty)

            // What a token held before signing, rewound to the zone's beginning, without a baseline:
            // as it was, unsigned, and as content under the real token's signature.
            var rewound = try Self.content(first.token)
            rewound["s"] = 0
            rewound["b"] = nil
            let unsigned = ServerChangeToken(data: try Self.json(rewound))
            let resigned = ServerChangeToken(data: first.token.data.prefix(Self.headerBytes) + (try Self.json(rewound)))
            for crafted in [unsigned, resigned] {
                let answer = try await home.grace.send(
                    .post, "/v1/databases/shared/records/changes",
                    body: try JSONEncoder().encode(FetchZoneChangesRequest(zoneID: home.lists, since: crafted)))
                #expect(answer.status == 410, "\(answer.status)")
                let error = try JSONDecoder().decode(ErrorBody.self, from: answer.body)
                #expect(error.code == .changeTokenExpired && error.reason == .changeTokenInvalid, "\(error)")
                #expect(
                    error.message.contains("not issued by this server or was altered")
                        && error.message.contains("fetch again without a token"), "\(error.message)")
                let text = String(decoding: answer.body, as: UTF8.self)
                #expect(!text.contains("Organic") && !text.contains("Item"), "\(text)")
            }
            // What the engine then does: fetch from the start, which names no deletion from before.
            let again = try await home.grace.fetchAllZoneChanges(home.lists, scope: .shared)
            #expect(again.deletions.isEmpty, "\(again.deletions.map(\.name))")
            #expect(!again.modifications.map(\.recordID.recordName).contains("Organic"))
        }
    }

    @Test("a byte changed anywhere in a real token (database, zone, shared database) gets the same refusal")
    func alteredTokens() async throws {
        try await withServer { _, anonymous in
            var home = try await Household(anonymous)
            let share = try await home.share("Groceries", with: [(home.graceID, .readWrite)])
            try await home.grace.acceptShare(token: share.token)
            let database = try await home.ada.fetchDatabaseChanges().changeToken
            let zone = try await home.ada.fetchZoneChanges(Household.zone).changeToken
            let shared = try await home.grace.fetchDatabaseChanges(scope: .shared).changeToken
            // Accepted as issued.
            _ = try await home.ada.fetchDatabaseChanges(since: database)
            _ = try await home.ada.fetchZoneChanges(Household.zone, since: zone)
            _ = try await home.grace.fetchDatabaseChanges(since: shared, scope: .shared)
            for token in [database, zone, shared] {
                // The key ID, the MAC, the content's first and last byte.
                for index in [2, 10, Self.headerBytes, token.data.count - 1] {
                    var bytes = token.data
                    bytes[bytes.startIndex + index] ^= 0x01
                    let altered = ServerChangeToken(data: bytes)
                    let error = await syncError {
                        if token == database {
                            _ = try await home.ada.fetchDatabaseChanges(since: altered)
                        } else if token == zone {
                            _ = try await home.ada.fetchZoneChanges(Household.zone, since: altered)
                        } else {
                            _ = try await home.grace.fetchDatabaseChanges(since: altered, scope: .shared)
                        }
                    }
                    #expect(Self.isInvalid(error), "byte \(index): \(String(describing: error))")
                }
            }
        }
    }

    @Test("after a rotation the new key signs; the previous key's tokens are accepted in its grace, refused after")
    func rotation() async throws {
        let clock = TestClock()
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: Date())
        try await withServer(configuration: configuration) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let old = try await ada.fetchZoneChanges(contactsZone).changeToken
            #expect(Self.keyID(old) == 1)

            let now = configuration.clock.now()
            let key = try await server.store.rotateChangeTokenKey(
                now: now, previousValidUntil: now.addingTimeInterval(24 * 3600))
            #expect(key.id == 2)
            // Running servers read the keys again within a minute.
            await clock.advance(by: .seconds(61))
            let new = try await ada.fetchZoneChanges(contactsZone, since: old).changeToken
            #expect(Self.keyID(new) == 2, "the new key signs")
            _ = try await ada.fetchZoneChanges(contactsZone, since: old)

            await clock.advance(by: .seconds(24 * 3600))
            let refused = await syncError { _ = try await ada.fetchZoneChanges(contactsZone, since: old) }
            #expect(Self.isInvalid(refused), "\(String(describing: refused))")
            _ = try await ada.fetchZoneChanges(contactsZone, since: new)
        }
    }

    @Test("a rotation with no grace refuses the previous key's tokens at once")
    func rotationWithoutGrace() async throws {
        let clock = TestClock()
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: Date())
        try await withServer(configuration: configuration) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let old = try await ada.fetchDatabaseChanges().changeToken
            let now = configuration.clock.now()
            try await server.store.rotateChangeTokenKey(now: now, previousValidUntil: now)
            await clock.advance(by: .seconds(61))
            let refused = await syncError { _ = try await ada.fetchDatabaseChanges(since: old) }
            #expect(Self.isInvalid(refused), "\(String(describing: refused))")
        }
    }
}

/// An error body as the server writes it, `reason` included.
private struct ErrorBody: Decodable {
    var code: SyncError.Code
    var message: String
    var reason: SyncError.Reason?
}

/// Two instances on one PostgreSQL database share the keys.
@Suite(
    "Signed change tokens across instances", .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
struct ChangeTokenInstancesTests {
    private static func keyID(_ token: ServerChangeToken) -> Int {
        token.data.dropFirst().prefix(4).reduce(0) { $0 << 8 | Int($1) }
    }

    @Test("instances creating the first key at once end up with one key")
    func firstKeyOnce() async throws {
        let path = "token-first-key-\(UUID())"
        let (one, two) = try await TestServer.$backend.withValue(.postgres) {
            (
                try await TestServer.start(storagePath: path, transport: .inProcess),
                try await TestServer.start(storagePath: path, transport: .inProcess)
            )
        }
        do {
            let now = Date()
            let seen = try await withThrowingTaskGroup(of: [ChangeTokenKey].self) { group in
                for store in Array(repeating: one.store, count: 4) + Array(repeating: two.store, count: 4) {
                    group.addTask { try await store.changeTokenKeys(now: now) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(seen.count == 8)
            #expect(Set(seen).count == 1 && seen.first?.count == 1, "\(seen.map { $0.map(\.id) })")
        } catch {
            Issue.record(error)
        }
        try await one.stop()
        try await two.stop()
        try await TestPostgres.dropDatabase(TestPostgres.databaseName(for: path))
    }

    @Test("two instances accept each other's tokens, and one takes up a key rotated through the other")
    func sharedKeys() async throws {
        let path = "token-keys-\(UUID())"
        // A clock each, so that one instance reads the keys again while the other does not.
        let (clockOne, clockTwo) = (TestClock(), TestClock())
        var (configurationOne, configurationTwo) = (SyncServerConfiguration.testing, SyncServerConfiguration.testing)
        configurationOne.clock = ServerClock(clockOne, startingAt: Date())
        configurationTwo.clock = ServerClock(clockTwo, startingAt: Date())
        let (one, two) = try await TestServer.$backend.withValue(.postgres) {
            (
                try await TestServer.start(configuration: configurationOne, storagePath: path, transport: .inProcess),
                try await TestServer.start(configuration: configurationTwo, storagePath: path, transport: .inProcess)
            )
        }
        do {
            let onOne = try await TestClient(baseURL: one.baseURL).signedUp(username: "ada")
            var onTwo = TestClient(baseURL: two.baseURL)
            onTwo.token = onOne.token
            try await onOne.saveZones("Contacts")
            let fromOne = try await onOne.fetchZoneChanges(contactsZone).changeToken
            let fromTwo = try await onTwo.fetchZoneChanges(contactsZone, since: fromOne).changeToken
            _ = try await onOne.fetchZoneChanges(contactsZone, since: fromTwo)
            #expect(Self.keyID(fromOne) == 1 && Self.keyID(fromTwo) == 1, "both made the same first key")

            // A rotation, as `sync-server admin rotate-token-key` makes it. Instance 2 reads the keys
            // again on its timer; instance 1, not due yet, when a token names a key it does not know.
            let now = configurationTwo.clock.now()
            let key = try await two.store.rotateChangeTokenKey(
                now: now, previousValidUntil: now.addingTimeInterval(3600))
            await clockTwo.advance(by: .seconds(61))
            let signedWithNew = try await onTwo.fetchZoneChanges(contactsZone).changeToken
            #expect(Self.keyID(signedWithNew) == Int(key.id))
            await clockOne.advance(by: .seconds(2))
            _ = try await onOne.fetchZoneChanges(contactsZone, since: signedWithNew)
            _ = try await onOne.fetchZoneChanges(contactsZone, since: fromOne)
        } catch {
            Issue.record(error)
        }
        try await one.stop()
        try await two.stop()
        try await TestPostgres.dropDatabase(TestPostgres.databaseName(for: path))
    }
}
