import Foundation
import NIOCore
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// Records naming assets: only complete uploads of the saving account (or the record's own assets), of
/// the size named; a save names its assets anew, and the ones it no longer names are detached.
@Suite("Records naming assets: what may be named, and what a save attaches and detaches", .onEveryBackend)
struct AssetRecordTests {
    /// Uploads `size` bytes as `uploader` through the store, completely unless `received` says otherwise.
    static func upload(
        _ store: any RecordStore, uploader: String, size: Int64 = 8, received: Int64? = nil
    ) async throws -> AssetReference {
        let id = AssetReference.newID()
        try await store.createAssetUpload(id: id, uploader: uploader, size: size, now: Date())
        let bytes = [UInt8](repeating: 7, count: Int(received ?? size))
        _ = try await store.appendToAsset(id: id, at: 0, AssetStoreTests.body([bytes]), now: Date())
        return AssetReference(assetID: id, size: size, key: Data("sealed key".utf8))
    }

    static func contact(_ name: String, photo: AssetReference?, zone: RecordZone.ID = contactsZone) -> RecordValue {
        var record = RecordValue(recordType: "Contact", recordID: RecordValue.ID(recordName: name, zoneID: zone))
        record["name"] = .string(name)
        if let photo { record["photo"] = .asset(photo) }
        return record
    }

    @Test("a record names a complete upload of its own: saved, fetched back as sent, and the asset is the record's")
    func namesItsUpload() async throws {
        try await withServer { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let adaID = try await ada.account().userRecordName
            try await ada.saveZones("Contacts")
            let photo = try await Self.upload(server.store, uploader: adaID)
            let gallery = [
                try await Self.upload(server.store, uploader: adaID),
                try await Self.upload(server.store, uploader: adaID),
            ]
            var record = Self.contact("ada", photo: photo)
            record["gallery"] = .list(gallery.map(FieldValue.asset))
            try await ada.save([record])
            let fetched = try #require(try await ada.contents()["ada"])
            #expect(fetched["photo"] == .asset(photo), "the ID, the size and the client's key come back as sent")
            #expect(fetched["gallery"] == .list(gallery.map(FieldValue.asset)))
            let place = AssetPlace(owner: adaID, key: RecordKey(record.recordID))
            for asset in [photo] + gallery {
                #expect(try await server.store.asset(id: asset.assetID)?.record == place)
            }
        }
    }

    @Test(
        "refused, each with its reason and the rest of the batch saved: an ID never uploaded, another account's upload, another record's asset, an incomplete upload, a wrong size"
    )
    func refusals() async throws {
        try await withServer { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let adaID = try await ada.account().userRecordName
            let grace = try await anonymous.signedUp(username: "grace")
            let graceID = try await grace.account().userRecordName
            try await ada.saveZones("Contacts")
            let store = server.store
            let attachedElsewhere = try await Self.upload(store, uploader: adaID)
            try await ada.save([Self.contact("first", photo: attachedElsewhere)])
            var wrongSize = try await Self.upload(store, uploader: adaID)
            wrongSize.size = 9
            let cases: [(String, AssetReference, String)] = [
                ("never", AssetReference(assetID: AssetReference.newID(), size: 8), "has not uploaded"),
                ("graces", try await Self.upload(store, uploader: graceID), "has not uploaded"),
                ("elsewhere", attachedElsewhere, "has not uploaded"),
                ("incomplete", try await Self.upload(store, uploader: adaID, received: 3), "holds 3 of its 8 bytes"),
                ("wrongsize", wrongSize, "has 9 bytes; the upload has 8"),
            ]
            let fine = try await Self.upload(store, uploader: adaID)
            let response = try await ada.modifyRecords(
                ModifyRecordsRequest(
                    saves: cases.map { Self.contact($0.0, photo: $0.1) } + [Self.contact("fine", photo: fine)]))
            #expect(response.savedRecords.map(\.recordID.recordName) == ["fine"])
            for (name, _, reason) in cases {
                let failure = response.failedRecordSaves.first { $0.recordID.recordName == name }
                #expect(failure?.error.code == .invalidArguments, "\(name): \(String(describing: failure))")
                #expect(failure?.error.message.contains(reason) == true, "\(name): \(String(describing: failure))")
                #expect(failure?.error.message.contains("field 'photo'") == true, "\(name)")
            }
            // One upload named by two records of one request: the first has it, the second fails.
            let shared = try await Self.upload(store, uploader: adaID)
            let twice = try await ada.modifyRecords(
                ModifyRecordsRequest(saves: [Self.contact("one", photo: shared), Self.contact("two", photo: shared)]))
            #expect(twice.savedRecords.map(\.recordID.recordName) == ["one"])
            #expect(
                twice.failedRecordSaves.first?.error.message.contains("another record of this request") == true,
                "\(twice.failedRecordSaves)")
            #expect(try await store.asset(id: shared.assetID)?.record?.key.recordName == "one")
            // Nothing refused was attached; Grace's upload is still hers to name.
            #expect(try await store.asset(id: cases[1].1.assetID)?.record == nil)
            #expect(try await store.asset(id: attachedElsewhere.assetID)?.record?.key.recordName == "first")
        }
    }

    @Test(
        "a save that names another asset detaches the old one; a save of other keys keeps it; saving the record's own asset again is allowed"
    )
    func replaceAndKeep() async throws {
        try await withServer { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let adaID = try await ada.account().userRecordName
            try await ada.saveZones("Contacts")
            let store = server.store
            let old = try await Self.upload(store, uploader: adaID)
            let saved = try await ada.save([Self.contact("ada", photo: old)])
            // Another key changed, the photo left as it is: the asset stays attached.
            var renamed = try #require(saved.first)
            renamed["name"] = "Ada Lovelace"
            let afterRename = try await ada.save([renamed], policy: .changedKeys)
            #expect(try await store.asset(id: old.assetID)?.detachedAt == nil)
            // The whole record again, naming its own asset: allowed.
            let again = try await ada.save([try #require(afterRename.first)])
            // A new photo: the old one is detached, the new one attached.
            let new = try await Self.upload(store, uploader: adaID)
            var replaced = try #require(again.first)
            replaced["photo"] = .asset(new)
            let withNew = try await ada.save([replaced])
            #expect(try await store.asset(id: old.assetID)?.detachedAt != nil)
            #expect(try await store.asset(id: new.assetID)?.record?.key.recordName == "ada")
            #expect(try await store.asset(id: new.assetID)?.detachedAt == nil)
            // The photo removed, the record naming no asset at all: its last one is detached too.
            var without = try #require(withNew.first)
            without["photo"] = nil
            try await ada.save([without])
            #expect(try await store.asset(id: new.assetID)?.detachedAt != nil)
        }
    }

    @Test("an asset value that cannot be one is a 400 naming the field, and nothing is stored")
    func badValues() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            try await ada.saveZones("Contacts")
            for (value, reason) in [
                (#"{"assetID":"xyz","size":1}"#, "32 lowercase hexadecimal digits"),
                (#"{"assetID":"0123456789abcdef0123456789abcdef","size":0}"#, "at least one byte"),
                (#"{"assetID":"0123456789abcdef0123456789abcdef","size":1,"key":"!!"}"#, "base64"),
            ] {
                let body = """
                    {"saves":[{"recordID":{"recordName":"a","zoneID":{"zoneName":"Contacts"}},"recordType":"Contact",
                    "fields":{"photo":{"type":"asset","value":\(value)}}}]}
                    """
                let answer = try await ada.send(.post, "/v1/databases/private/records/modify", body: Data(body.utf8))
                #expect(answer.status == 400, "\(value)")
                #expect(answer.error?.message.contains(reason) == true, "\(value): \(String(describing: answer.error))")
            }
            #expect(try await ada.contents().isEmpty)
        }
    }
}
