import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// Assets through HTTP: an upload in requests with `Content-Range`, resumed after a short body;
/// downloads whole and in ranges; and every refusal, each saying what to do.
@Suite("Assets over HTTP: resumable uploads, ranged downloads, refusals", .onEveryBackend)
struct AssetRouteTests {
    /// Bytes no two positions of which are alike in a short run, so that a misplaced range shows.
    static func bytes(_ count: Int, seed: UInt8 = 1) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 251 &+ Int(seed)) }
    }

    static func contact(_ name: String, photo: AssetReference) -> RecordValue {
        AssetRecordTests.contact(name, photo: photo)
    }

    @Test("an upload in three requests, a short body resumed from where it stood, then downloaded whole and in ranges")
    func uploadAndDownload() async throws {
        try await withServer { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let photo = Self.bytes(300_000)
            let upload = try await ada.createUpload(size: Int64(photo.count))
            #expect(upload.received == 0 && upload.size == 300_000)
            var answer = try await ada.sendUploadBytes(upload.uploadID, photo[0..<100_000], from: 0, total: 300_000)
            #expect(try answer.decoded(as: AssetUpload.self).received == 100_000)
            // A body shorter than its Content-Range (as when a connection drops): what came is kept.
            answer = try await ada.sendUploadBytes(
                upload.uploadID, photo[100_000..<150_000], from: 100_000, total: 300_000,
                contentRange: "bytes 100000-199999/300000")
            #expect(answer.status == 400)
            #expect(answer.error?.message.contains("the upload holds 150000 bytes: send from there") == true)
            #expect(try await ada.uploadStatus(upload.uploadID).received == 150_000)
            answer = try await ada.sendUploadBytes(upload.uploadID, photo[150_000...], from: 150_000, total: 300_000)
            #expect(try answer.decoded(as: AssetUpload.self).isComplete)

            let reference = AssetReference(assetID: upload.uploadID, size: 300_000)
            let record = Self.contact("ada", photo: reference)
            try await ada.save([record])
            let whole = try await ada.downloadAsset(upload.uploadID, of: record.recordID)
            #expect(whole.status == 200)
            #expect([UInt8](whole.body) == photo)
            #expect(whole.header("Accept-Ranges") == "bytes")
            #expect(whole.header("ETag") == "\"\(upload.uploadID)\"")
            #expect(whole.header("Content-Type") == "application/octet-stream")

            let ranges: [(String, Range<Int>)] = [
                ("bytes=0-0", 0..<1), ("bytes=262140-262150", 262_140..<262_151),
                ("bytes=299990-", 299_990..<300_000), ("bytes=-7", 299_993..<300_000),
                ("bytes=299999-400000", 299_999..<300_000),
            ]
            for (header, range) in ranges {
                let part = try await ada.downloadAsset(
                    upload.uploadID, of: record.recordID, headers: [("Range", header)])
                #expect(part.status == 206, "\(header)")
                #expect([UInt8](part.body) == Array(photo[range]), "\(header)")
                #expect(part.header("Content-Range") == "bytes \(range.lowerBound)-\(range.upperBound - 1)/300000")
            }
            let past = try await ada.downloadAsset(
                upload.uploadID, of: record.recordID, headers: [("Range", "bytes=300000-")])
            #expect(past.status == 416)
            #expect(past.header("Content-Range") == "bytes */300000")
            // Ranges it does not serve, and a range under another validator: the whole asset.
            for headers in [
                [("Range", "bytes=0-1,5-6")], [("Range", "lines=1-2")], [("Range", "bytes=9-2")],
                [("Range", "bytes=0-9"), ("If-Range", "\"another\"")],
            ] {
                let answer = try await ada.downloadAsset(upload.uploadID, of: record.recordID, headers: headers)
                #expect(answer.status == 200 && answer.body.count == 300_000, "\(headers)")
            }
        }
    }

    @Test("uploads refused, each saying what to do, and nothing changed by them")
    func uploadRefusals() async throws {
        var configuration = SyncServerConfiguration.testing
        configuration.limits.maximumAssetBytes = 5_000_000
        configuration.limits.maximumRequestBytes = 1_200_000
        try await withServer(configuration: configuration) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let grace = try await anonymous.signedUp(username: "grace")
            func refusal(_ body: () async throws -> Void) async -> (String, String) {
                let error = await syncError(body)
                return (error?.code.rawValue ?? "none", error?.message ?? "")
            }
            var (code, message) = await refusal { _ = try await ada.createUpload(size: 0) }
            #expect(code == "invalidArguments" && message.contains("at least one byte"))
            (code, message) = await refusal { _ = try await ada.createUpload(size: 5_000_001) }
            #expect(code == "limitExceeded" && message.contains("limit of 5000000"))
            let limits: ServerLimits = try await anonymous.call(.get, "/v1/limits")
            #expect(limits.maximumAssetBytes == 5_000_000)

            let upload = try await ada.createUpload(size: 2_000_000)
            let id = upload.uploadID
            let bytes = Self.bytes(2_000_000)
            var answer = try await ada.send(.put, "/v1/assets/uploads/\(id)", body: Data(bytes[0..<10]))
            #expect(answer.error?.message.contains("needs a Content-Range header") == true)
            for header in ["bytes 0-9", "bytes 9-0/2000000", "bytes=0-9/2000000", "bytes 0-2000000/2000000", "0-9/x"] {
                answer = try await ada.sendUploadBytes(id, bytes[0..<10], from: 0, total: 0, contentRange: header)
                #expect(answer.status == 400, "\(header)")
                #expect(answer.error?.message.contains("is not 'bytes FIRST-LAST/SIZE'") == true, "\(header)")
            }
            answer = try await ada.sendUploadBytes(id, bytes[0..<10], from: 0, total: 3_000_000)
            #expect(answer.error?.message.contains("was made for 2000000") == true)
            answer = try await ada.sendUploadBytes(
                id, bytes[0..<10], from: 0, total: 2_000_000, contentRange: "bytes 0-1200000/2000000")
            #expect(answer.error?.message.contains("send at most 1200000 per request") == true)
            answer = try await ada.sendUploadBytes(id, bytes[10..<20], from: 10, total: 2_000_000)
            #expect(answer.status == 409)
            #expect(answer.error?.message.contains("holds 0 of its 2000000 bytes") == true)
            // A body longer than its Content-Range: what it announced is kept, the rest refused.
            answer = try await ada.sendUploadBytes(
                id, bytes[0..<20], from: 0, total: 2_000_000, contentRange: "bytes 0-9/2000000")
            #expect(answer.status == 400)
            #expect(answer.error?.message.contains("more bytes than the 10 its Content-Range announced") == true)
            #expect(try await ada.uploadStatus(id).received == 10)

            // Another account's upload, and one that never was, answer alike.
            let never = AssetReference.newID()
            for other in [id, never] {
                let who = other == id ? "grace on ada's" : "an unknown upload"
                (code, message) = await refusal { _ = try await grace.uploadStatus(other) }
                #expect(
                    code == "unknownItem"
                        && message
                            == "there is no upload '\(other)'; it may have expired (uploads no record names are kept for a day): upload the asset again",
                    "\(who)")
                answer = try await grace.sendUploadBytes(other, bytes[10..<20], from: 10, total: 2_000_000)
                #expect(answer.status == 404, "\(who)")
            }
            #expect(try await ada.uploadStatus(id).received == 10, "grace's bytes went nowhere")
            (code, message) = await refusal { _ = try await ada.uploadStatus("../../etc/passwd") }
            #expect(code == "invalidArguments" || code == "unknownItem", "\(message)")
            (code, message) = await refusal { _ = try await ada.uploadStatus("ABCDEF0123456789ABCDEF0123456789") }
            #expect(code == "invalidArguments" && message.contains("32 lowercase hexadecimal digits"))
            answer = try await anonymous.send(.post, "/v1/assets/uploads", body: Data(#"{"size":5}"#.utf8))
            #expect(answer.status == 401, "signed out")
        }
    }

    @Test("a download needs the record that names the asset now; every other case answers as no asset")
    func downloadRefusals() async throws {
        try await withServer { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let first = try await ada.upload(Self.bytes(1000))
            let second = try await ada.upload(Self.bytes(2000, seed: 9))
            let unnamed = try await ada.upload(Self.bytes(3000, seed: 5))
            let alan = Self.contact("alan", photo: first)
            let grace = Self.contact("grace", photo: second)
            try await ada.save([alan, grace])
            #expect(try await ada.downloadAsset(first.assetID, of: alan.recordID).status == 200)
            for (assetID, recordID, why) in [
                (first.assetID, grace.recordID, "another record's asset"),
                (unnamed.assetID, alan.recordID, "an upload no record names"),
                (AssetReference.newID(), alan.recordID, "an asset that never was"),
            ] {
                let answer = try await ada.downloadAsset(assetID, of: recordID)
                #expect(answer.status == 404, "\(why)")
                #expect(answer.error?.message.contains("names no asset") == true, "\(why)")
            }
            let nowhere = RecordValue.ID(recordName: "nobody", zoneID: contactsZone)
            #expect(try await ada.downloadAsset(first.assetID, of: nowhere).error?.code == .unknownItem)
            let noZone = RecordValue.ID(recordName: "alan", zoneID: RecordZone.ID(zoneName: "Elsewhere"))
            #expect(try await ada.downloadAsset(first.assetID, of: noZone).error?.code == .zoneNotFound)
            var answer = try await ada.send(.get, "/v1/databases/private/assets/\(first.assetID)")
            #expect(answer.status == 400 && answer.error?.message.contains("?zoneName=") == true)
            answer = try await ada.send(
                .get, "/v1/databases/public/assets/\(first.assetID)?zoneName=Contacts&recordName=alan")
            #expect(answer.status == 400)
            // An owner named by nothing is not the default owner: refused, saying what the owner must be.
            answer = try await ada.send(
                .get, "/v1/databases/shared/assets/\(first.assetID)?zoneName=Contacts&recordName=alan&ownerName=")
            #expect(answer.status == 400 && answer.error?.message.contains("ownerName must be 1 to 255 bytes") == true)

            // A new photo: the old one is no longer the record's; then the record goes.
            try await ada.save([Self.contact("alan", photo: unnamed)], policy: .allKeys)
            #expect(try await ada.downloadAsset(first.assetID, of: alan.recordID).status == 404)
            #expect(try await ada.downloadAsset(unnamed.assetID, of: alan.recordID).status == 200)
            _ = try await ada.modifyRecords(ModifyRecordsRequest(deletes: [alan.recordID]))
            #expect(try await ada.downloadAsset(unnamed.assetID, of: alan.recordID).status == 404)
            _ = server
        }
    }

    @Test("a read-write participant's own upload, named in the owner's zone: the owner and the participant download it")
    func participantUpload() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let adaID = try await ada.account().userRecordName
            let grace = try await anonymous.signedUp(username: "grace")
            let graceID = try await grace.account().userRecordName
            let mallory = try await anonymous.signedUp(username: "mallory")
            try await ada.saveZones("Family")
            let share = try await ada.saveShare(
                SaveShareRequest(
                    zoneID: RecordZone.ID(zoneName: "Family"),
                    participants: [.init(userRecordName: graceID, permission: .readWrite)]))
            try await grace.acceptShare(token: share.token)
            let family = RecordZone.ID(zoneName: "Family", ownerName: adaID)
            let photo = Self.bytes(5000, seed: 3)
            let reference = try await grace.upload(photo)
            // Mallory, who found the ID, cannot name it in a record of hers.
            try await mallory.saveZones("Contacts")
            let stolen = try await mallory.modifyRecords(
                ModifyRecordsRequest(saves: [Self.contact("stolen", photo: reference)]))
            #expect(stolen.failedRecordSaves.first?.error.code == .invalidArguments)
            let saved = try await grace.modifyRecords(
                ModifyRecordsRequest(saves: [AssetRecordTests.contact("babbage", photo: reference, zone: family)]),
                scope: .shared)
            #expect(saved.failedRecordSaves.isEmpty, "\(saved.failedRecordSaves)")
            let babbage = RecordValue.ID(recordName: "babbage", zoneID: family)
            #expect(
                [UInt8](try await grace.downloadAsset(reference.assetID, of: babbage, scope: .shared).body) == photo)
            let own = RecordValue.ID(recordName: "babbage", zoneID: RecordZone.ID(zoneName: "Family"))
            #expect([UInt8](try await ada.downloadAsset(reference.assetID, of: own).body) == photo)
            let answer = try await mallory.downloadAsset(reference.assetID, of: babbage, scope: .shared)
            #expect(answer.error?.code == .zoneNotFound)
        }
    }

    @Test("a connection lost in the middle of a body: the server keeps what arrived and the upload resumes from there")
    func lostConnection() async throws {
        try await withServer(transport: .loopback) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let photo = Self.bytes(100_000, seed: 4)
            let upload = try await ada.createUpload(size: 100_000)
            let connection = try await RawConnection.open(port: server.port)
            try await connection.send(
                "PUT /v1/assets/uploads/\(upload.uploadID) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Authorization: Bearer \(ada.token!)\r\nContent-Type: application/octet-stream\r\n"
                    + "Content-Range: bytes 0-99999/100000\r\nContent-Length: 100000\r\n\r\n")
            try await connection.send(photo[0..<60_000])
            connection.disconnect()
            try await waitUntil("the server counts the 60000 bytes that arrived") {
                try await ada.uploadStatus(upload.uploadID).received == 60_000
            } observed: {
                "the upload holds \((try? await ada.uploadStatus(upload.uploadID).received) ?? -1) bytes"
            }
            let answer = try await ada.sendUploadBytes(upload.uploadID, photo[60_000...], from: 60_000, total: 100_000)
            #expect(try answer.decoded(as: AssetUpload.self).isComplete)
            try await ada.saveZones("Contacts")
            let record = Self.contact("ada", photo: AssetReference(assetID: upload.uploadID, size: 100_000))
            try await ada.save([record])
            #expect([UInt8](try await ada.downloadAsset(upload.uploadID, of: record.recordID).body) == photo)
        }
    }

    @Test(
        "desiredKeys leaves asset fields out of fetches and lookups; without it a record names its asset, never its bytes"
    )
    func desiredKeys() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            let photo = try await ada.upload(Self.bytes(50_000))
            let record = Self.contact("ada", photo: photo)
            try await ada.save([record])
            let all = try await ada.fetchZoneChanges(contactsZone).modifications.first
            #expect(all?["photo"] == .asset(photo) && all?["name"] == .string("ada"))
            let request = FetchZoneChangesRequest(zoneID: contactsZone, desiredKeys: ["name"])
            let named: FetchZoneChangesResponse = try await ada.call(
                .post, "/v1/databases/private/records/changes", request)
            #expect(named.modifications.first?.fields.keys.sorted() == ["name"])
            let none: FetchZoneChangesResponse = try await ada.call(
                .post, "/v1/databases/private/records/changes",
                FetchZoneChangesRequest(zoneID: contactsZone, desiredKeys: []))
            #expect(none.modifications.first?.fields.isEmpty == true)
            #expect(none.modifications.first?.recordChangeTag != nil, "system fields still come")
            let looked: LookupRecordsResponse = try await ada.call(
                .post, "/v1/databases/private/records/lookup",
                LookupRecordsRequest(recordIDs: [record.recordID], desiredKeys: ["name"]))
            #expect(looked.records.first?.fields.keys.sorted() == ["name"])
            let bad = try await ada.send(
                .post, "/v1/databases/private/records/lookup",
                body: Data(#"{"recordIDs":[],"desiredKeys":["_system"]}"#.utf8))
            #expect(bad.status == 400 && bad.error?.message.contains("desiredKeys[0]") == true)
        }
    }
}
