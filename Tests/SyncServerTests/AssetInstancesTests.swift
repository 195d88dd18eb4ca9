import Foundation
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// Assets with several instances on one PostgreSQL database: the bytes are in the database, so any
/// instance continues an upload another began and serves any asset.
@Suite(
    "Assets across instances", .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
struct AssetInstancesTests {
    @Test("an upload begun on one instance goes on on the other; the record saved there; each instance serves it")
    func acrossInstances() async throws {
        let path = "assets-across-\(UUID())"
        let (one, two) = try await TestServer.$backend.withValue(.postgres) {
            (try await TestServer.start(storagePath: path), try await TestServer.start(storagePath: path))
        }
        do {
            let onOne = try await TestClient(baseURL: one.baseURL).signedUp(username: "ada")
            let onTwo = try await TestClient(baseURL: two.baseURL).signedIn(username: "ada")
            try await onTwo.saveZones("Contacts")
            let photo = AssetRouteTests.bytes(700_000, seed: 5)
            let upload = try await onOne.createUpload(size: 700_000)
            _ = try await onOne.sendUploadBytes(upload.uploadID, photo[0..<300_000], from: 0, total: 700_000)
                .decoded(as: AssetUpload.self)
            #expect(try await onTwo.uploadStatus(upload.uploadID).received == 300_000, "the other instance sees it")
            let done = try await onTwo.sendUploadBytes(
                upload.uploadID, photo[300_000...], from: 300_000, total: 700_000
            ).decoded(as: AssetUpload.self)
            #expect(done.isComplete)
            let record = AssetRecordTests.contact("ada", photo: AssetReference(assetID: upload.uploadID, size: 700_000))
            try await onTwo.save([record])
            for client in [onOne, onTwo] {
                #expect([UInt8](try await client.downloadAsset(upload.uploadID, of: record.recordID).body) == photo)
                let part = try await client.downloadAsset(
                    upload.uploadID, of: record.recordID, headers: [("Range", "bytes=262100-262200")])
                #expect([UInt8](part.body) == Array(photo[262_100...262_200]))
            }
        } catch {
            Issue.record(error)
        }
        try await one.stop()
        try await two.stop()
        try await TestPostgres.dropDatabase(TestPostgres.databaseName(for: path))
    }
}
