import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// `POST /v1/account/encryption/change` (issue 33, deliverable 5): the new settings and every key
/// wrapped again, in one transaction; no record touched; the account's other devices told; and
/// anything a device made meanwhile refuses the change with the thing named, changing nothing.
@Suite("Passphrase change: settings and wrapped keys replaced at once", .onEveryBackend)
struct PassphraseChangeTests {
    static let old = AccountEncryptionSettings(
        salt: Data(repeating: 1, count: 16), costN: 1024, blockSizeR: 8, parallelismP: 1, keyVersion: 1,
        verifier: Data([1, 1, 1]))
    static let new = AccountEncryptionSettings(
        salt: Data(repeating: 2, count: 16), costN: 1024, blockSizeR: 8, parallelismP: 1, keyVersion: 2,
        verifier: Data([2, 2, 2]))
    static let oldPair = AccountKeyPair(publicKey: Data(repeating: 5, count: 32), wrappedPrivateKey: Data([1, 5]))
    static let newPair = AccountKeyPair(publicKey: Data(repeating: 5, count: 32), wrappedPrivateKey: Data([2, 5]))

    static func key(_ version: Int, _ generation: UInt8, _ zone: UInt8) -> RecordZone.EncryptionKey {
        RecordZone.EncryptionKey(keyVersion: version, wrappedKey: Data([generation, zone, 0, 0]))
    }

    /// Ada with settings, a key pair, two keyed zones (Family at key version 1, Notes at 2), a
    /// zone without a key, a contact in Family, and Grace's Garden accepted with an own slot.
    private struct Setup {
        var ada: TestClient
        var grace: TestClient
        var garden: RecordZone.ID

        init(_ anonymous: TestClient) async throws {
            ada = try await anonymous.signedUp(username: "ada")
            ada.deviceID = "ada-laptop"
            grace = try await anonymous.signedUp(username: "grace")
            try await ada.put("/v1/account/encryption", PassphraseChangeTests.old)
            try await ada.put("/v1/account/encryption/key-pair", PassphraseChangeTests.oldPair)
            try await ada.modifyZones(
                ModifyZonesRequest(saves: [
                    RecordZone(
                        zoneID: RecordZone.ID(zoneName: "Family"), encryptionKey: PassphraseChangeTests.key(1, 1, 1)),
                    RecordZone(
                        zoneID: RecordZone.ID(zoneName: "Notes"), encryptionKey: PassphraseChangeTests.key(2, 1, 2)),
                    RecordZone(zoneID: RecordZone.ID(zoneName: "Plain")),
                ]))
            try await ada.save([contact("Alan", zone: RecordZone.ID(zoneName: "Family"))])
            try await grace.saveZones("Garden")
            let adaID = try await ada.account().userRecordName
            let share = try await grace.saveShare(
                SaveShareRequest(
                    zoneID: RecordZone.ID(zoneName: "Garden"),
                    participants: [.init(userRecordName: adaID, permission: .readWrite)]))
            garden = RecordZone.ID(zoneName: "Garden", ownerName: try await grace.account().userRecordName)
            try await ada.acceptShare(token: share.token, encryptionKey: PassphraseChangeTests.key(1, 1, 3))
        }

        /// The change that covers everything Ada has.
        var change: EncryptionChangeRequest {
            EncryptionChangeRequest(
                expectedKeyVersion: 1, settings: PassphraseChangeTests.new,
                zoneKeys: [
                    ZoneKeyUpdate(
                        zoneID: RecordZone.ID(zoneName: "Family"), encryptionKey: PassphraseChangeTests.key(1, 2, 1)),
                    ZoneKeyUpdate(
                        zoneID: RecordZone.ID(zoneName: "Notes"), encryptionKey: PassphraseChangeTests.key(2, 2, 2)),
                ],
                sharedZoneKeys: [ZoneKeyUpdate(zoneID: garden, encryptionKey: PassphraseChangeTests.key(1, 2, 3))],
                keyPair: PassphraseChangeTests.newPair)
        }

        /// Everything the change may touch, to compare before and after.
        func state() async throws -> State {
            State(
                settings: try await ada.call(.get, "/v1/account/encryption"), zones: try await ada.listZones(),
                shared: try await ada.listZones(scope: .shared),
                records: try await ada.contents(of: RecordZone.ID(zoneName: "Family")),
                token: try await ada.fetchDatabaseChanges().changeToken)
        }
    }

    private struct State: Equatable {
        var settings: AccountEncryptionSettings
        var zones: [RecordZone]
        var shared: [RecordZone]
        var records: [String: RecordValue]
        var token: ServerChangeToken
    }

    @Test("the change replaces the settings and every wrapped key, touches no record, and tells the other devices")
    func changeReplacesEverything() async throws {
        try await withServer(transport: .loopback) { server, anonymous in
            let setup = try await Setup(anonymous)
            let family = RecordZone.ID(zoneName: "Family")
            let recordsBefore = try await setup.ada.contents(of: family)
            let token = try await setup.ada.fetchDatabaseChanges().changeToken
            var phone = try await anonymous.signedIn(username: "ada")
            phone.deviceID = "ada-phone"
            let phoneSocket = try await phone.openPush()

            let answer: AccountEncryptionSettings = try await setup.ada.call(
                .post, "/v1/account/encryption/change", setup.change)
            var expected = Self.new
            expected.keyPair = Self.newPair
            #expect(answer == expected)
            #expect(
                try await phone.call(.get, "/v1/account/encryption", as: AccountEncryptionSettings.self) == expected)
            let zones = Dictionary(uniqueKeysWithValues: try await phone.listZones().map { ($0.zoneID.zoneName, $0) })
            #expect(zones["Family"]?.encryptionKey == Self.key(1, 2, 1))
            #expect(zones["Notes"]?.encryptionKey == Self.key(2, 2, 2))
            #expect(zones["Plain"]?.encryptionKey == nil)
            #expect(try await phone.listZones(scope: .shared).map(\.encryptionKey) == [Self.key(1, 2, 3)])
            #expect(try await phone.account().publicKey == Self.oldPair.publicKey)

            // No record changed: same values, same change tags.
            #expect(try await phone.contents(of: family) == recordsBefore)
            // The keyed zones changed as zones do; the other device heard of it.
            let changes = try await phone.fetchDatabaseChanges(since: token)
            #expect(Set(changes.modifications.map(\.zoneName)) == ["Family", "Notes"])
            var heard: [PushMessage] = []
            let privateChanged = PushMessage(event: .databaseChanged, scope: .private)
            while !heard.contains(privateChanged), let next = await phoneSocket.next() { heard.append(next.message) }
            #expect(heard.contains(privateChanged), "\(heard)")
            phoneSocket.close()

            // A retry (the answer was lost) answers the same and writes nothing.
            let before = try await setup.state()
            let retry: AccountEncryptionSettings = try await setup.ada.call(
                .post, "/v1/account/encryption/change", setup.change)
            #expect(retry == expected)
            #expect(try await setup.state() == before)
            _ = server
        }
    }

    @Test("anything the change does not cover, or covers wrongly, refuses it with the thing named, and nothing changes")
    func refusals() async throws {
        try await withServer { _, anonymous in
            let setup = try await Setup(anonymous)
            let before = try await setup.state()
            func refusal(_ edit: (inout EncryptionChangeRequest) -> Void) async throws -> HTTPAnswer {
                var change = setup.change
                edit(&change)
                return try await setup.ada.send(
                    .post, "/v1/account/encryption/change", body: try JSONEncoder().encode(change))
            }
            let cases: [(String, Int, SyncError.Code, String, (inout EncryptionChangeRequest) -> Void)] = [
                (
                    "changed on another device", 409, .serverRecordChanged, "another device",
                    {
                        $0.expectedKeyVersion = 2
                        $0.settings.keyVersion = 3
                    }
                ),
                ("a zone left out", 409, .constraintViolation, "'Notes'", { $0.zoneKeys.removeLast() }),
                (
                    "a zone without a key", 409, .constraintViolation, "'Plain'",
                    {
                        $0.zoneKeys.append(
                            ZoneKeyUpdate(zoneID: RecordZone.ID(zoneName: "Plain"), encryptionKey: Self.key(1, 2, 9)))
                    }
                ),
                (
                    "a zone that is not there", 409, .constraintViolation, "'Nowhere'",
                    {
                        $0.zoneKeys.append(
                            ZoneKeyUpdate(zoneID: RecordZone.ID(zoneName: "Nowhere"), encryptionKey: Self.key(1, 2, 9)))
                    }
                ),
                (
                    "a rotated zone", 409, .constraintViolation, "version 2",
                    { $0.zoneKeys[1].encryptionKey.keyVersion = 3 }
                ),
                ("a shared slot left out", 409, .constraintViolation, "Garden", { $0.sharedZoneKeys = [] }),
                ("the key pair left out", 409, .constraintViolation, "key pair", { $0.keyPair = nil }),
                (
                    "another public key", 409, .constraintViolation, "publicKey",
                    {
                        $0.keyPair = AccountKeyPair(
                            publicKey: Data(repeating: 6, count: 32), wrappedPrivateKey: Data([2]))
                    }
                ),
                (
                    "a version that is not the next", 400, .invalidArguments, "expectedKeyVersion + 1",
                    {
                        $0.settings.keyVersion = 5
                    }
                ),
                (
                    "a key pair inside the settings", 400, .invalidArguments, "settings.keyPair",
                    {
                        $0.settings.keyPair = Self.newPair
                    }
                ),
                ("a zone twice", 400, .invalidArguments, "twice", { $0.zoneKeys.append($0.zoneKeys[0]) }),
                (
                    "another user's zone", 403, .permissionFailure, "zoneKeys[0]",
                    {
                        $0.zoneKeys[0].zoneID.ownerName = "_someoneElse"
                    }
                ),
                (
                    "an own zone as a shared one", 400, .invalidArguments, "sharedZoneKeys[0]",
                    {
                        $0.sharedZoneKeys[0].zoneID = RecordZone.ID(zoneName: "Family")
                    }
                ),
            ]
            for (name, status, code, mention, edit) in cases {
                let answer = try await refusal(edit)
                #expect(answer.status == status && answer.error?.code == code, "\(name): \(answer.error as Any)")
                #expect(answer.error?.message.contains(mention) == true, "\(name): \(answer.error?.message ?? "")")
            }
            let stale = try await refusal {
                $0.expectedKeyVersion = 2
                $0.settings.keyVersion = 3
            }
            #expect(stale.error?.serverEncryptionSettings?.keyVersion == 1, "the conflict carries the stored settings")
            #expect(try await setup.state() == before, "a refused change changed something")

            let stranger = try await anonymous.signedUp(username: "eve")
            let none = try await stranger.send(
                .post, "/v1/account/encryption/change",
                body: try JSONEncoder().encode(
                    EncryptionChangeRequest(
                        expectedKeyVersion: 1, settings: Self.new, zoneKeys: [], sharedZoneKeys: [], keyPair: nil)))
            #expect(none.status == 404 && none.error?.code == .unknownItem)
        }
    }

    @Test("an account without a key pair may publish one with the change")
    func keyPairPublishedWithTheChange() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.put("/v1/account/encryption", Self.old)
            let answer: AccountEncryptionSettings = try await ada.call(
                .post, "/v1/account/encryption/change",
                EncryptionChangeRequest(
                    expectedKeyVersion: 1, settings: Self.new, zoneKeys: [], sharedZoneKeys: [], keyPair: Self.newPair))
            #expect(answer.keyPair == Self.newPair && answer.keyVersion == 2)
            #expect(try await ada.account().publicKey == Self.newPair.publicKey)
        }
    }
}

extension TestClient {
    fileprivate func put(_ path: String, _ value: some Encodable) async throws {
        let answer = try await send(.put, path, body: try JSONEncoder().encode(value))
        #expect((200..<300).contains(answer.status), "\(path): \(answer.error as Any)")
    }
}
