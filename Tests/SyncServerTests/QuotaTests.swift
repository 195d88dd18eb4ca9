import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// Per-account storage quotas: what counts, what is refused, and what always passes. Usage is
/// checked against the sum the database computes from the stored rows themselves.
@Suite("Storage quotas", .onEveryBackend)
struct QuotaTests {
    /// A server whose accounts may store `quota` bytes of fields unless told otherwise.
    private func withQuota<T>(
        _ quota: Int64?, transport: TestServer.Transport = .inProcess,
        _ body: (TestServer, TestClient) async throws -> T
    ) async throws -> T {
        var configuration = SyncServerConfiguration.testing
        configuration.defaultQuotaBytes = quota
        return try await withServer(configuration: configuration, transport: transport, body)
    }

    /// A record whose fields are `size` bytes as stored.
    private func record(_ name: String, size: Int, zone: RecordZone.ID = contactsZone) -> RecordValue {
        var record = RecordValue(recordType: "Note", recordID: RecordValue.ID(recordName: name, zoneID: zone))
        // {"text":{"type":"string","value":"…"}} around the text.
        let overhead = FieldCoding.encode(["text": .string("")]).count
        record["text"] = .string(String(repeating: "x", count: max(0, size - overhead)))
        #expect(FieldCoding.encode(record.fields).count == size)
        return record
    }

    private func usage(_ client: TestClient) async throws -> StorageUsage {
        try await client.call(.get, "/v1/account/usage")
    }

    @Test("a batch that would pass the quota is refused whole: 413 quotaExceeded with usage and limit, nothing stored")
    func overQuotaBatchIsRefusedWhole() async throws {
        try await withQuota(1_000) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let adaID = try await ada.account().userRecordName
            try await ada.saveZones("Contacts")
            try await ada.save([record("first", size: 600)])
            #expect(try await usage(ada) == StorageUsage(usedBytes: 600, limitBytes: 1_000))

            // 300 + 200 more would make 1,100: refused as a whole, the small save with it.
            let batch = ModifyRecordsRequest(saves: [record("second", size: 300), record("third", size: 200)])
            let answer = try await ada.send(
                .post, "/v1/databases/private/records/modify", body: try JSONEncoder().encode(batch))
            #expect(answer.status == 413)
            let error = try #require(answer.error)
            #expect(error.code == .quotaExceeded)
            #expect(error.quota == StorageUsage(usedBytes: 600, limitBytes: 1_000))
            #expect(error.message.contains("storage is full") && error.message.contains("500 bytes more"), "\(error)")
            #expect(error.message.contains("Delete records"), "says what to do: \(error.message)")

            #expect(try await ada.contents().keys.sorted() == ["first"], "nothing of the batch was stored")
            #expect(try await usage(ada).usedBytes == 600)
            #expect(try await server.storedFieldBytes(owner: adaID) == 600)
            // What fits still goes in, up to the limit exactly.
            try await ada.save([record("second", size: 400)])
            #expect(try await usage(ada).usedBytes == 1_000)
            #expect(try await server.storedFieldBytes(owner: adaID) == 1_000)
        }
    }

    @Test("over its quota an account can still delete, and save records smaller; growing stays refused")
    func shrinkingPassesOverQuota() async throws {
        try await withQuota(nil) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let adaID = try await ada.account().userRecordName
            try await ada.saveZones("Contacts")
            let saved = try await ada.save([record("a", size: 500), record("b", size: 500), record("c", size: 500)])
            #expect(try await usage(ada) == StorageUsage(usedBytes: 1_500, limitBytes: nil))
            // The operator lowers the quota below what the account holds.
            let set = try await server.store.setQuota(username: "ADA", .bytes(1_000))
            #expect(set?.quota == .bytes(1_000) && set?.usedBytes == 1_500)
            #expect(try await usage(ada) == StorageUsage(usedBytes: 1_500, limitBytes: 1_000))

            let growing = await syncError { _ = try await ada.save([record("d", size: 100)]) }
            #expect(growing?.code == .quotaExceeded)
            // A save that makes a record smaller, and a delete, pass although usage stays above the limit.
            var smaller = record("a", size: 200)
            smaller.recordChangeTag = saved[0].recordChangeTag
            try await ada.save([smaller])
            #expect(try await usage(ada).usedBytes == 1_200)
            let deleted = try await ada.modifyRecords(ModifyRecordsRequest(deletes: [saved[1].recordID]))
            #expect(deleted.deletedRecordIDs == [saved[1].recordID])
            #expect(try await usage(ada).usedBytes == 700)
            // Under the limit again: it grows up to the limit.
            try await ada.save([record("d", size: 300)])
            #expect(try await usage(ada) == StorageUsage(usedBytes: 1_000, limitBytes: 1_000))
            #expect(try await server.storedFieldBytes(owner: adaID) == 1_000)
            #expect(await syncError { _ = try await ada.save([record("e", size: 40)]) }?.code == .quotaExceeded)
        }
    }

    @Test("a participant's writes count to the zone's owner, and are refused when the owner's storage is full")
    func participantWritesCountToOwner() async throws {
        try await withQuota(nil) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let grace = try await anonymous.signedUp(username: "grace")
            let adaID = try await ada.account().userRecordName
            let graceID = try await grace.account().userRecordName
            try await ada.saveZones("Family")
            let family = RecordZone.ID(zoneName: "Family")
            let share = try await ada.saveShare(
                SaveShareRequest(zoneID: family, participants: [.init(userRecordName: graceID, permission: .readWrite)])
            )
            _ = try await grace.acceptShare(token: share.token)
            let before = try await usage(ada).usedBytes
            #expect(before == (try await server.storedFieldBytes(owner: adaID)), "the share's record counts too")

            let shared = RecordZone.ID(zoneName: "Family", ownerName: adaID)
            let written = try await grace.modifyRecords(
                ModifyRecordsRequest(saves: [record("from-grace", size: 700, zone: shared)]), scope: .shared)
            #expect(written.failedRecordSaves.isEmpty)
            #expect(try await usage(ada).usedBytes == before + 700)
            #expect(try await usage(grace).usedBytes == 0, "nothing counts to the participant")
            #expect(try await server.storedFieldBytes(owner: adaID) == before + 700)

            _ = try await server.store.setQuota(username: "ada", .bytes(before + 800))
            let refused = await syncError {
                _ = try await grace.modifyRecords(
                    ModifyRecordsRequest(saves: [record("more", size: 200, zone: shared)]), scope: .shared)
            }
            #expect(refused?.code == .quotaExceeded)
            #expect(refused?.message.contains("account that owns this zone") == true, "\(String(describing: refused))")
            #expect(refused?.quota == nil, "a participant is not told the owner's figures")
            #expect(try await usage(ada).usedBytes == before + 700)
        }
    }

    @Test("usage follows saves, changes and deletes; a deleted zone's usage leaves at once; made again, it is empty")
    func usageFollowsEveryWrite() async throws {
        try await withQuota(1 << 20) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let adaID = try await ada.account().userRecordName
            let keep = RecordZone.ID(zoneName: "Keep")
            let drop = RecordZone.ID(zoneName: "Drop")
            try await ada.saveZones("Keep", "Drop")
            func check(_ expected: Int64, _ comment: Comment) async throws {
                #expect(try await usage(ada).usedBytes == expected, comment)
                #expect(try await server.storedFieldBytes(owner: adaID) == expected, comment)
            }
            let saved = try await ada.save([
                record("k1", size: 100, zone: keep), record("k2", size: 200, zone: keep),
                record("d1", size: 300, zone: drop), record("d2", size: 400, zone: drop),
            ])
            try await check(1_000, "four saves")
            // A changed-keys save that adds a field grows the record by what it adds.
            var grown = RecordValue(recordType: "Note", recordID: saved[0].recordID)
            grown["extra"] = .int64(7)
            let stored = try await ada.save([grown], policy: .changedKeys)
            let k1 = Int64(FieldCoding.encode(stored[0].fields).count)
            #expect(k1 > 100)
            try await check(900 + k1, "a changed-keys save")
            _ = try await ada.modifyRecords(ModifyRecordsRequest(deletes: [saved[1].recordID]))
            try await check(700 + k1, "a delete")

            let deletion = try await ada.modifyZones(ModifyZonesRequest(deletes: [drop]))
            #expect(deletion.deletedZoneIDs == [drop])
            try await check(k1, "the Drop zone deleted")
            #expect(try await server.storedRows(owner: adaID, zoneName: "Drop") == 0, "its records are gone")
            let changes = try await ada.fetchDatabaseChanges()
            #expect(changes.deletions.map(\.zoneID) == [drop])

            try await ada.saveZones("Drop")
            #expect(try await ada.fetchAllZoneChanges(drop).modifications.isEmpty, "made again, the zone is empty")
            try await ada.save([record("d1", size: 50, zone: drop)])
            try await check(k1 + 50, "a save into the zone made again")
        }
    }

    @Test("a zone of 2,500 records is deleted at once and purged in chunks; usage and changes stay right")
    func largeZoneDeletion() async throws {
        try await withQuota(nil, transport: .loopback) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let adaID = try await ada.account().userRecordName
            var laptop = try await anonymous.signedIn(username: "ada")
            laptop.deviceID = "laptop"
            let big = RecordZone.ID(zoneName: "Big")
            try await ada.saveZones("Big", "Small")
            for start in stride(from: 0, to: 2_500, by: 400) {
                try await ada.save((start..<min(start + 400, 2_500)).map { record("r\($0)", size: 120, zone: big) })
            }
            try await ada.save([record("s", size: 80, zone: RecordZone.ID(zoneName: "Small"))])
            #expect(try await usage(ada).usedBytes == 2_500 * 120 + 80)
            let token = try await laptop.fetchDatabaseChanges().changeToken
            let socket = try await laptop.openPush()
            defer { socket.close() }

            _ = try await ada.modifyZones(ModifyZonesRequest(deletes: [big]))
            #expect(await socket.next()?.message == PushMessage(event: .databaseChanged, scope: .private))
            #expect(try await usage(ada).usedBytes == 80)
            #expect(try await server.storedFieldBytes(owner: adaID) == 80)
            #expect(try await server.storedRows(owner: adaID, zoneName: "Big") == 0, "every chunk was purged")
            let changes = try await laptop.fetchDatabaseChanges(since: token)
            #expect(changes.deletions.map(\.zoneID) == [big] && changes.modifications.isEmpty)
            #expect(await syncError { _ = try await ada.fetchZoneChanges(big) }?.code == .zoneNotFound)
        }
    }

    @Test("records a deleted zone left behind (a purge cut short) never show, and go when the zone is made again")
    func leftoversOfAnInterruptedPurge() async throws {
        try await withQuota(nil) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let adaID = try await ada.account().userRecordName
            let zone = RecordZone.ID(zoneName: "Notes")
            try await ada.saveZones("Notes", "Other")
            for start in stride(from: 0, to: 1_500, by: 375) {
                try await ada.save((start..<start + 375).map { record("n\($0)", size: 100, zone: zone) })
            }
            // The store alone: the zone's tombstone is written, its records stay for a purge that
            // does not come (as when the server stops in between).
            _ = try await server.store.modifyZones(owner: adaID, saves: [], deletes: ["Notes"], now: Date())
            #expect(try await server.storedRows(owner: adaID, zoneName: "Notes") == 1_500)
            #expect(try await usage(ada).usedBytes == 0, "a deleted zone counts nothing, purged or not")

            try await ada.saveZones("Notes")
            #expect(try await server.storedRows(owner: adaID, zoneName: "Notes") == 0)
            #expect(try await ada.fetchAllZoneChanges(zone).modifications.isEmpty)
            #expect(try await ada.lookupRecords([record("n1", size: 100, zone: zone).recordID]).records.isEmpty)
            try await ada.save([record("n1", size: 60, zone: zone)])
            #expect(try await usage(ada).usedBytes == 60)

            // Left behind again: compaction purges what no request did.
            _ = try await server.store.modifyZones(owner: adaID, saves: [], deletes: ["Notes"], now: Date())
            try await ada.save([record("o", size: 40, zone: RecordZone.ID(zoneName: "Other"))])
            #expect(try await server.storedRows(owner: adaID, zoneName: "Notes") == 1)
            _ = try await server.store.compactHistory(tombstonesBefore: .distantPast, requestsBefore: .distantPast)
            #expect(try await server.storedRows(owner: adaID, zoneName: "Notes") == 0)
            #expect(try await usage(ada).usedBytes == 40)
            #expect(try await server.storedFieldBytes(owner: adaID) == 40)
        }
    }

    @Test("GET /v1/account/usage needs a session, and an account with no quota reports no limit")
    func usageRoute() async throws {
        try await withQuota(nil) { _, anonymous in
            let answer = try await anonymous.send(.get, "/v1/account/usage")
            #expect(answer.status == 401)
            let ada = try await anonymous.signedUp(username: "ada")
            let raw = try await ada.send(.get, "/v1/account/usage")
            #expect(raw.status == 200)
            #expect(String(decoding: raw.body, as: UTF8.self) == #"{"usedBytes":0}"#)
        }
    }
}
