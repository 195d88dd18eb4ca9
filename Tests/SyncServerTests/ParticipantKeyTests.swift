import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// The server's part of keys per participant (issue 33): an account's key pair, the public key
/// in every answer that identifies an account, zone keys replaced by newer versions, and the keys
/// an owner wraps to each participant. The server stores bytes it cannot open; these tests check
/// who may write which of them, and that hostile sizes are refused before anything is stored.
@Suite("Account key pairs, zone key versions and participants' shared keys", .onEveryBackend)
struct ParticipantKeyTests {
    static let settings = AccountEncryptionSettings(
        salt: Data(repeating: 7, count: 16), costN: 1024, blockSizeR: 8, parallelismP: 1, keyVersion: 1,
        verifier: Data([1, 2, 3]))

    static func keyPair(_ seed: UInt8) -> AccountKeyPair {
        AccountKeyPair(publicKey: Data(repeating: seed, count: 32), wrappedPrivateKey: Data(repeating: seed, count: 60))
    }

    static func key(_ version: Int, _ seed: UInt8, bytes: Int = 40) -> RecordZone.EncryptionKey {
        RecordZone.EncryptionKey(keyVersion: version, wrappedKey: Data(repeating: seed, count: bytes))
    }

    @Test(
        "a key pair needs settings, is stored once (a retry answers 200, another 409 with the stored one), and a reset removes it"
    )
    func keyPairLifecycle() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let first = Self.keyPair(1)

            let early = try await ada.putKeyPair(first)
            #expect(early.status == 404 && early.error?.code == .unknownItem, "\(early.error as Any)")
            #expect(early.error?.message.contains("no encryption settings") == true)

            try await ada.putSettings(Self.settings)
            #expect(try await ada.putKeyPair(first).status == 201)
            #expect(try await ada.settings().keyPair == first)
            #expect(try await ada.account().publicKey == first.publicKey)
            #expect(try await ada.putKeyPair(first).status == 200, "the same key pair again is a retry")

            let second = try await ada.putKeyPair(Self.keyPair(2))
            #expect(second.status == 409 && second.error?.code == .serverRecordChanged)
            #expect(second.error?.serverEncryptionSettings?.keyPair == first, "the conflict carries the stored pair")
            #expect(try await ada.settings().keyPair == first, "the stored pair stays")

            // Settings are stored without a key pair, and the stored ones still answer a retry.
            var withPair = Self.settings
            withPair.keyPair = Self.keyPair(3)
            let refused = try await ada.send(.put, "/v1/account/encryption", body: try JSONEncoder().encode(withPair))
            #expect(refused.status == 400 && refused.error?.message.contains("keyPair") == true)
            let retry = try await ada.send(
                .put, "/v1/account/encryption", body: try JSONEncoder().encode(Self.settings))
            #expect(retry.status == 200, "\(retry.error as Any)")
            #expect(try await ada.settings().keyPair == first)

            let reset = try await ada.send(.post, "/v1/account/encryption/reset", body: Data(json: "{}"))
            #expect(reset.status == 200)
            #expect(try await ada.send(.get, "/v1/account/encryption").status == 404)
            #expect(try await ada.account().publicKey == nil, "the reset took the key pair with the settings")
            try await ada.putSettings(Self.settings)
            #expect(try await ada.settings().keyPair == nil)
            #expect(try await ada.putKeyPair(Self.keyPair(2)).status == 201, "a new pair after a reset")
        }
    }

    @Test("the public key is in user lookup, in share metadata's owner identity and in GET /v1/account")
    func publicKeyInIdentities() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople.withFamilyZone(anonymous)
            try await people.ada.putSettings(Self.settings)
            try await people.ada.putKeyPair(Self.keyPair(1))
            try await people.grace.putSettings(Self.settings)
            try await people.grace.putKeyPair(Self.keyPair(2))

            let lookup = try await people.ada.lookupUsers(["grace", "bob"])
            #expect(lookup.users.map(\.username) == ["grace", "bob"])
            #expect(lookup.users.map(\.publicKey) == [Self.keyPair(2).publicKey, nil], "bob has published none")

            let share = try await people.shareFamily(grace: .readWrite)
            let metadata = try await people.grace.shareMetadata(token: share.token)
            #expect(metadata.ownerIdentity.publicKey == Self.keyPair(1).publicKey)
            #expect(try await people.grace.acceptShare(token: share.token).ownerIdentity.publicKey != nil)
        }
    }

    @Test("a zone's key is replaced only by a higher version; the same or a lower one leaves the stored key")
    func zoneKeyVersions() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            func save(_ key: RecordZone.EncryptionKey) async throws -> RecordZone.EncryptionKey? {
                let response = try await ada.modifyZones(
                    ModifyZonesRequest(saves: [RecordZone(zoneID: contactsZone, encryptionKey: key)]))
                return response.savedZones.first?.encryptionKey
            }
            func stored() async throws -> RecordZone.EncryptionKey? {
                try await ada.listZones().first { $0.zoneID == contactsZone }?.encryptionKey
            }
            #expect(try await save(Self.key(1, 1)) == Self.key(1, 1))
            #expect(try await save(Self.key(1, 2)) == Self.key(1, 1), "another device's first key loses")
            #expect(try await stored() == Self.key(1, 1))

            // A chain of two versions, as large as the wire allows.
            let rotated = Self.key(2, 3, bytes: 16384)
            #expect(try await save(rotated) == rotated)
            #expect(try await stored() == rotated)
            #expect(try await save(Self.key(1, 4)) == rotated, "an older version never comes back")
            #expect(try await save(Self.key(2, 5)) == rotated, "a rival chain of the same version loses")
            #expect(try await stored() == rotated)
        }
    }

    @Test(
        "the owner's key for each participant is stored per participant, seen as the zone's sharedKey and as sharedKeyVersion"
    )
    func sharedKeysPerParticipant() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople.withFamilyZone(anonymous)
            let share = try await people.shareFamily(grace: .readWrite, graceKey: Self.key(1, 1), bob: .readOnly)
            #expect(share.participants.map(\.sharedKeyVersion) == [nil, 1, nil])
            try await people.grace.acceptShare(token: share.token, encryptionKey: Self.key(1, 9))
            try await people.bob.acceptShare(token: share.token)

            var graceZone = try #require(try await people.grace.listZones(scope: .shared).first)
            #expect(graceZone.zoneID == people.family)
            #expect(graceZone.encryptionKey == Self.key(1, 9), "her own slot, from her acceptance")
            #expect(graceZone.sharedKey == Self.key(1, 1), "the key Ada wrapped to her")
            #expect(try await people.bob.listZones(scope: .shared).first?.sharedKey == nil)
            #expect(try await people.ada.listZones().first { $0.zoneID == familyZone }?.sharedKey == nil)

            // Saved again without keys: Grace's stays. With a newer one for Bob: only his changes.
            try await people.shareFamily(grace: .readWrite, bob: .readOnly)
            #expect(try await people.grace.listZones(scope: .shared).first?.sharedKey == Self.key(1, 1))
            let rotated = try await people.shareFamily(
                grace: .readWrite, graceKey: Self.key(2, 2), bob: .readOnly, bobKey: Self.key(2, 3))
            #expect(rotated.participants.map(\.sharedKeyVersion) == [nil, 2, 2])
            #expect(rotated.participants.map(\.acceptanceStatus) == [.accepted, .accepted, .accepted])
            graceZone = try #require(try await people.grace.listZones(scope: .shared).first)
            #expect(graceZone.sharedKey == Self.key(2, 2) && graceZone.encryptionKey == Self.key(1, 9))
            #expect(try await people.bob.listZones(scope: .shared).first?.sharedKey == Self.key(2, 3))
            #expect(try await people.ada.fetchShare(familyZone).participants.map(\.sharedKeyVersion) == [nil, 2, 2])

            // The share's record lists who is in it, not their keys' versions.
            let record = try #require(
                try await people.grace.fetchAllZoneChanges(people.family, scope: .shared).modifications.first {
                    $0.recordType == Share.recordType
                })
            let entries = record["participants"]?.listValue?.compactMap(\.stringValue) ?? []
            #expect(entries.count == 3 && entries.allSatisfy { !$0.contains("sharedKeyVersion") }, "\(entries)")

            // Removed, then invited again: the key she had is gone.
            try await people.shareFamily(grace: nil, bob: .readOnly)
            #expect(try await people.grace.listZones(scope: .shared).isEmpty)
            let again = try await people.shareFamily(grace: .readWrite, bob: .readOnly)
            #expect(again.participants.map(\.sharedKeyVersion) == [nil, nil, 2])
        }
    }

    @Test("accepting again with a key replaces the participant's own slot; without one it stays")
    func acceptAgainReplacesOwnSlot() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople.withFamilyZone(anonymous)
            let share = try await people.shareFamily(grace: .readWrite, graceKey: Self.key(1, 1))
            try await people.grace.acceptShare(token: share.token, encryptionKey: Self.key(1, 5))
            try await people.grace.acceptShare(token: share.token)
            #expect(try await people.grace.listZones(scope: .shared).first?.encryptionKey == Self.key(1, 5))
            try await people.grace.acceptShare(token: share.token, encryptionKey: Self.key(3, 6))
            let zone = try #require(try await people.grace.listZones(scope: .shared).first)
            #expect(zone.encryptionKey == Self.key(3, 6))
            #expect(zone.sharedKey == Self.key(1, 1), "accepting never touches the owner's key for her")
        }
    }

    @Test("a stranger, a removed participant and a read-only participant cannot write anyone's keys")
    func whoCannotWriteKeys() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople.withFamilyZone(anonymous)
            try await people.ada.modifyZones(
                ModifyZonesRequest(saves: [RecordZone(zoneID: familyZone, encryptionKey: Self.key(1, 1))]))
            let share = try await people.shareFamily(
                grace: .readOnly, graceKey: Self.key(1, 2), bob: .readWrite, bobKey: Self.key(1, 3))
            try await people.grace.acceptShare(token: share.token, encryptionKey: Self.key(1, 4))
            try await people.bob.acceptShare(token: share.token, encryptionKey: Self.key(1, 5))
            func state() async throws -> [String] {
                let zone = try await people.ada.listZones().first { $0.zoneID == familyZone }
                let shared = try await people.ada.fetchShare(familyZone)
                return [
                    "\(zone?.encryptionKey as Any)", "\(shared.participants.map(\.sharedKeyVersion))",
                    "\(try await people.grace.listZones(scope: .shared))",
                    "\(try await people.bob.listZones(scope: .shared))",
                ]
            }
            let before = try await state()

            // Eve, a stranger: a share save of Ada's zone, a zone save there, an acceptance.
            let hostileShare = SaveShareRequest(
                zoneID: people.family,
                participants: [
                    .init(userRecordName: people.graceID, permission: .readWrite, encryptionKey: Self.key(9, 9))
                ])
            for client in [people.eve, people.grace] {
                let answer = try await client.send(
                    .post, "/v1/shares/save", body: try JSONEncoder().encode(hostileShare))
                #expect(answer.status == 403 && answer.error?.code == .permissionFailure, "\(answer.error as Any)")
            }
            let zoneSave = ModifyZonesRequest(saves: [RecordZone(zoneID: people.family, encryptionKey: Self.key(9, 9))])
            let privateSave = try await people.eve.send(
                .post, "/v1/databases/private/zones/modify", body: try JSONEncoder().encode(zoneSave))
            #expect(privateSave.status == 403, "\(privateSave.error as Any)")
            // Grace, read-only, through her shared database.
            let sharedSave = try await people.grace.modifyZones(zoneSave, scope: .shared)
            #expect(sharedSave.failedZoneSaves.map(\.error.code) == [.permissionFailure])
            let eveAccept = await syncError {
                try await people.eve.acceptShare(token: share.token, encryptionKey: Self.key(9, 9))
            }
            #expect(eveAccept?.code == .unknownItem)

            // Grace accepting again writes only her own slot.
            try await people.grace.acceptShare(token: share.token, encryptionKey: Self.key(1, 4))
            #expect(try await state() == before)

            // Bob, once removed, cannot write his slot back.
            try await people.shareFamily(grace: .readOnly)
            let removedAccept = await syncError {
                try await people.bob.acceptShare(token: share.token, encryptionKey: Self.key(9, 9))
            }
            #expect(removedAccept?.code == .unknownItem)
            #expect(try await people.bob.listZones(scope: .shared).isEmpty)
            #expect(try await people.ada.fetchShare(familyZone).participants.map(\.userRecordName).count == 2)

            // Grace leaves: her keys go with her, and the owner's zone key is untouched.
            let left = try await people.grace.modifyZones(ModifyZonesRequest(deletes: [people.family]), scope: .shared)
            #expect(left.deletedZoneIDs == [people.family])
            let after = try await people.ada.fetchShare(familyZone)
            #expect(after.participants.map(\.acceptanceStatus) == [.accepted, .removed])
            #expect(after.participants.map(\.sharedKeyVersion) == [nil, nil])
            #expect(try await people.ada.listZones().first { $0.zoneID == familyZone }?.encryptionKey == Self.key(1, 1))
        }
    }

    @Test("hostile sizes are refused with the member named, and nothing is stored")
    func hostileSizes() async throws {
        try await withServer { _, anonymous in
            let people = try await SharingPeople.withFamilyZone(anonymous)
            try await people.ada.putSettings(Self.settings)
            let wrapped = Data(repeating: 1, count: 60).base64EncodedString()
            let badPairs = [
                (
                    #"{"publicKey":"\#(Data(count: 31).base64EncodedString())","wrappedPrivateKey":"\#(wrapped)"}"#,
                    "publicKey"
                ),
                (
                    #"{"publicKey":"\#(Data(count: 33).base64EncodedString())","wrappedPrivateKey":"\#(wrapped)"}"#,
                    "publicKey"
                ),
                (
                    #"{"publicKey":"\#(Data(count: 32).base64EncodedString())","wrappedPrivateKey":""}"#,
                    "wrappedPrivateKey"
                ),
                (
                    #"{"publicKey":"\#(Data(count: 32).base64EncodedString())","wrappedPrivateKey":"\#(Data(count: 513).base64EncodedString())"}"#,
                    "wrappedPrivateKey"
                ),
                (#"{"publicKey":null,"wrappedPrivateKey":"\#(wrapped)"}"#, "publicKey"),
                (#"{"publicKey":"not base64!","wrappedPrivateKey":"\#(wrapped)"}"#, "publicKey"),
            ]
            for (body, member) in badPairs {
                let answer = try await people.ada.send(.put, "/v1/account/encryption/key-pair", body: Data(json: body))
                #expect(answer.status == 400 && answer.error?.code == .invalidArguments, "\(body)")
                #expect(answer.error?.message.contains(member) == true, "\(answer.error as Any)")
            }
            #expect(try await people.ada.settings().keyPair == nil)

            let tooLong = Data(count: 16385).base64EncodedString()
            let zoneSave = #"""
                {"saves":[{"zoneID":{"zoneName":"Family"},"encryptionKey":{"keyVersion":2,"wrappedKey":"\#(tooLong)"}}]}
                """#
            let zoneAnswer = try await people.ada.send(
                .post, "/v1/databases/private/zones/modify", body: Data(json: zoneSave))
            #expect(zoneAnswer.status == 400 && zoneAnswer.error?.message.contains("wrappedKey") == true)
            let invitee = #"""
                {"zoneID":{"zoneName":"Family"},"participants":[{"userRecordName":"\#(people.graceID)","permission":"readOnly","encryptionKey":{"keyVersion":1,"wrappedKey":"\#(tooLong)"}}]}
                """#
            let shareAnswer = try await people.ada.send(.post, "/v1/shares/save", body: Data(json: invitee))
            #expect(shareAnswer.status == 400 && shareAnswer.error?.message.contains("wrappedKey") == true)
            let versionZero = #"""
                {"zoneID":{"zoneName":"Family"},"participants":[{"userRecordName":"\#(people.graceID)","permission":"readOnly","encryptionKey":{"keyVersion":0,"wrappedKey":"AQID"}}]}
                """#
            let zeroAnswer = try await people.ada.send(.post, "/v1/shares/save", body: Data(json: versionZero))
            #expect(zeroAnswer.status == 400 && zeroAnswer.error?.message.contains("keyVersion") == true)
            let nullKey = #"""
                {"zoneID":{"zoneName":"Family"},"participants":[{"userRecordName":"\#(people.graceID)","permission":"readOnly","encryptionKey":null}]}
                """#
            #expect(try await people.ada.send(.post, "/v1/shares/save", body: Data(json: nullKey)).status == 400)
            let unshared = await syncError { _ = try await people.ada.fetchShare(familyZone) }
            #expect(unshared?.code == .unknownItem, "no refused save made a share")
            #expect(try await people.ada.listZones().first { $0.zoneID == familyZone }?.encryptionKey == nil)
        }
    }
}

extension SharingPeople {
    /// The four of ``SharingPeople``, Ada with her Family zone saved.
    fileprivate static func withFamilyZone(_ anonymous: TestClient) async throws -> SharingPeople {
        let people = try await SharingPeople(anonymous)
        try await people.ada.saveZones("Family")
        return people
    }

    /// Ada saves the Family share with these people (nil: not in it) and keys for them.
    @discardableResult
    fileprivate func shareFamily(
        grace: ShareParticipant.Permission?, graceKey: RecordZone.EncryptionKey? = nil,
        bob: ShareParticipant.Permission? = nil, bobKey: RecordZone.EncryptionKey? = nil
    ) async throws -> Share {
        var invitees: [SaveShareRequest.Invitee] = []
        if let grace { invitees.append(.init(userRecordName: graceID, permission: grace, encryptionKey: graceKey)) }
        if let bob { invitees.append(.init(userRecordName: bobID, permission: bob, encryptionKey: bobKey)) }
        return try await ada.saveShare(SaveShareRequest(zoneID: familyZone, participants: invitees))
    }
}

private let familyZone = RecordZone.ID(zoneName: "Family")

extension TestClient {
    fileprivate func putSettings(_ settings: AccountEncryptionSettings) async throws {
        let answer = try await send(.put, "/v1/account/encryption", body: try JSONEncoder().encode(settings))
        #expect((200..<300).contains(answer.status), "\(answer.error as Any)")
    }

    @discardableResult
    fileprivate func putKeyPair(_ keyPair: AccountKeyPair) async throws -> HTTPAnswer {
        try await send(.put, "/v1/account/encryption/key-pair", body: try JSONEncoder().encode(keyPair))
    }

    fileprivate func settings() async throws -> AccountEncryptionSettings {
        try await call(.get, "/v1/account/encryption")
    }
}
