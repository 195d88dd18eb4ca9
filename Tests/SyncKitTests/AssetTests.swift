import Foundation
import NIOCore
import SyncCrypto
import SyncKit
import SyncServer
import SyncTesting
import Synchronization
import Testing

/// `Asset(fileURL:)` as CloudKit's `CKAsset`, through `Database` against the real server: uploaded
/// encrypted before its record, downloaded on demand by another device into its cache, and refused when
/// the server serves other bytes or moves a sealed key.
@Suite("Assets through Database: encrypted upload, download on demand, tampering refused")
struct AssetTests {
    static let zoneID = RecordZone.ID(zoneName: "Contacts")

    /// A device's database with its own keyring and asset cache.
    static func device(_ server: TestServer, _ account: TestClient, _ name: String) throws -> (Database, URL) {
        let cache = URL(fileURLWithPath: TemporaryFiles.path("asset-cache"))
        let database = Database(
            serverURL: URL(string: server.baseURL)!, credentials: .token(account.token!), deviceID: name,
            keyring: TestDevice.keyring(), assetCache: AssetCache(directory: cache, limitBytes: 10_000_000))
        return (database, cache)
    }

    /// Ada's laptop and phone (each its own keyring and asset cache, removed after) on a new server, with
    /// the zone made.
    static func withLaptopAndPhone(_ body: (TestServer, Database, Database, URL) async throws -> Void) async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let account = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
            let (laptop, laptopCache) = try device(server, account, "laptop")
            let (phone, phoneCache) = try device(server, account, "phone")
            defer {
                for cache in [laptopCache, phoneCache] { try? FileManager.default.removeItem(at: cache) }
            }
            try await laptop.save(RecordZone(zoneID: zoneID))
            try await body(server, laptop, phone, phoneCache)
        }
    }

    /// A file of `count` bytes unlike any others (a counter's bytes), to find in the server's storage.
    static func photoFile(_ count: Int, seed: UInt32 = 7) throws -> (URL, Data) {
        var bytes = Data(capacity: count)
        var value = seed
        while bytes.count < count {
            value = value &* 1_664_525 &+ 1_013_904_223
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }
        bytes = bytes.prefix(count)
        let file = URL(fileURLWithPath: TemporaryFiles.path("photo", extension: "jpg"))
        try bytes.write(to: file)
        return (file, bytes)
    }

    @Test(
        "a record's Asset(fileURL:) goes up encrypted before the record; another device sees it without its bytes, downloads them on demand, and the server holds ciphertext only"
    )
    func roundTrip() async throws {
        try await Self.withLaptopAndPhone { server, laptop, phone, phoneCache in
            let (file, photo) = try Self.photoFile(300_000)
            defer { try? FileManager.default.removeItem(at: file) }
            let record = Record(recordType: "Contact", recordID: Record.ID(recordName: "ada", zoneID: Self.zoneID))
            record["name"] = "Ada"
            record["photo"] = Asset(fileURL: file)
            let saved = try await laptop.save(record)
            let sent = try #require(saved["photo"] as? Asset)
            let assetID = try #require(sent.assetID)
            #expect(sent.size == 300_000)

            let stored = try #require(try await server.store.asset(id: assetID))
            #expect(stored.size == AssetKey.ciphertextSize(ofPlaintext: 300_000), "the server holds the ciphertext")
            var ciphertext = Data()
            try await server.store.readAsset(id: assetID, range: 0..<stored.size) {
                ciphertext.append(contentsOf: $0.readableBytesView)
            }
            for start in stride(from: 0, to: photo.count - 32, by: 4096) {
                #expect(ciphertext.range(of: photo[start..<(start + 32)]) == nil, "plaintext at \(start) on the server")
            }

            let fetched = try await phone.record(for: record.recordID)
            let asset = try #require(fetched["photo"] as? Asset)
            #expect(asset.assetID == assetID)
            #expect(asset.fileURL == nil, "a fetch brings no bytes")
            #expect(asset.size == 300_000)
            let nameOnly = try await phone.record(for: record.recordID, desiredKeys: ["name"])
            #expect(
                nameOnly["photo"] == nil && nameOnly["name"] as? String == "Ada", "desiredKeys leaves the asset out")
            let downloaded = try await phone.fetchAssetContent(asset, of: record.recordID)
            #expect(try Data(contentsOf: downloaded) == photo)
            #expect(downloaded.path.hasPrefix(phoneCache.path))
            #expect(asset.fileURL == downloaded, "once downloaded, the asset's file is the cached copy")
            let mode = try FileManager.default.attributesOfItem(atPath: downloaded.path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600)
        }
    }

    @Test(
        "the asset cache keeps to its limit: a download past it removes the copies used least recently, never its own")
    func cacheLimit() async throws {
        try await Self.withLaptopAndPhone { server, laptop, _, _ in
            var saved: [Record] = []
            for index in 0..<3 {
                let (file, _) = try Self.photoFile(100_000, seed: UInt32(20 + index))
                defer { try? FileManager.default.removeItem(at: file) }
                let record = Record(
                    recordType: "Contact", recordID: Record.ID(recordName: "c\(index)", zoneID: Self.zoneID))
                record["photo"] = Asset(fileURL: file)
                saved.append(try await laptop.save(record))
            }
            let account = try await TestClient(baseURL: server.baseURL).signedIn(username: "ada")
            let cacheDirectory = URL(fileURLWithPath: TemporaryFiles.path("small-cache"))
            defer { try? FileManager.default.removeItem(at: cacheDirectory) }
            var tablet = try Self.device(server, account, "tablet").0
            tablet.assetCache = AssetCache(directory: cacheDirectory, limitBytes: 250_000)
            var copies: [URL] = []
            for record in saved.prefix(2) {
                let asset = try #require(try await tablet.record(for: record.recordID)["photo"] as? Asset)
                copies.append(try await tablet.fetchAssetContent(asset, of: record.recordID))
            }
            // The first copy was used last: the second is the one to go.
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 1_000)], ofItemAtPath: copies[1].path)
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 2_000)], ofItemAtPath: copies[0].path)
            let third = try #require(try await tablet.record(for: saved[2].recordID)["photo"] as? Asset)
            let thirdCopy = try await tablet.fetchAssetContent(third, of: saved[2].recordID)
            #expect(FileManager.default.fileExists(atPath: thirdCopy.path))
            #expect(FileManager.default.fileExists(atPath: copies[0].path), "used more recently: kept")
            #expect(!FileManager.default.fileExists(atPath: copies[1].path), "used least recently: removed")
        }
    }

    @Test("bytes the server changed, and a record whose sealed asset key was moved or swapped, are refused")
    func tampering() async throws {
        try await Self.withLaptopAndPhone { server, laptop, phone, phoneCache in
            var saved: [String: Record] = [:]
            for name in ["ada", "grace"] {
                let (file, _) = try Self.photoFile(100_000, seed: name == "ada" ? 1 : 2)
                defer { try? FileManager.default.removeItem(at: file) }
                let record = Record(recordType: "Contact", recordID: Record.ID(recordName: name, zoneID: Self.zoneID))
                record["photo"] = Asset(fileURL: file)
                saved[name] = try await laptop.save(record)
            }
            let ada = try #require(saved["ada"])
            let grace = try #require(saved["grace"])
            let adaAsset = try #require(ada["photo"] as? Asset)

            // A byte of Ada's stored ciphertext changed (SQLite keeps it in a file beside the database).
            let stored = URL(fileURLWithPath: server.storagePath + "-assets/\(adaAsset.assetID!)")
            var bytes = try Data(contentsOf: stored)
            bytes[70_000] ^= 0x01
            try bytes.write(to: stored)
            let fetched = try await phone.record(for: ada.recordID)
            let error = await #expect(throws: SyncError.self) {
                try await phone.fetchAssetContent(try #require(fetched["photo"] as? Asset), of: ada.recordID)
            }
            #expect(error?.code == .recordTampered)
            #expect(error?.message.contains("nothing of it was kept") == true, "\(String(describing: error))")
            let left = try FileManager.default.contentsOfDirectory(atPath: phoneCache.path)
            #expect(left.isEmpty, "no partial copy: \(left)")

            // As a hostile server would serve them: Grace's record with Ada's sealed key, and Ada's key
            // pointing at Grace's asset.
            let arrivedAda = try #require(try await phone.lookupArrived(ada.recordID))
            let arrivedGrace = try #require(try await phone.lookupArrived(grace.recordID))
            #expect(try await phone.incomingChecked([arrivedAda]).first?.result.get().recordID == ada.recordID)
            var moved = arrivedGrace
            moved["photo"] = arrivedAda["photo"]
            var swapped = arrivedAda
            if case .asset(var reference) = arrivedAda["photo"], case .asset(let other) = arrivedGrace["photo"] {
                reference.assetID = other.assetID
                swapped["photo"] = .asset(reference)
            }
            var pending = arrivedAda
            pending["photo"] = Asset(fileURL: URL(fileURLWithPath: "/etc/passwd")).recordFieldValue
            for (forged, what) in [(moved, "moved"), (swapped, "swapped"), (pending, "a local file")] {
                let outcome = try await phone.incomingChecked([forged])
                let error = #expect(throws: SyncError.self, "\(what)") { try outcome.first?.result.get() }
                #expect(error?.code == .recordTampered, "\(what): \(String(describing: error))")
            }
        }
    }
}

extension Database {
    /// The record as the server sends it, sealed values unopened.
    fileprivate func lookupArrived(_ recordID: Record.ID) async throws -> RecordValue? {
        try await DatabaseClient(database: self).lookupRecords(LookupRecordsRequest(recordIDs: [recordID])).records
            .first
    }
}

/// The engine with assets, as an app ported from CKSyncEngine uses them.
@Suite("Assets through the engine")
struct AssetEngineTests {
    @Test(
        "an engine sends a record of a sealed type with record[\"photo\"] = Asset(fileURL:); another device's engine fetches it and downloads the photo"
    )
    func engineSendsAndFetches() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let account = try await TestClient(baseURL: server.baseURL).signedUp(username: "ada")
            let sealed = SealedRecordTypes(["Contact": .all])
            func engine(_ name: String) throws -> (SyncEngine, SealedRecordTypesTests.Device, Database) {
                var (database, _) = try AssetTests.device(server, account, name)
                database.sealedRecordTypes = sealed
                let device = SealedRecordTypesTests.Device()
                var configuration = SyncEngine.Configuration(
                    database: database, stateSerialization: nil, delegate: device)
                configuration.automaticallySync = false
                configuration.schedulerProbes = []
                return (SyncEngine(configuration), device, database)
            }
            let (laptop, laptopDevice, laptopDatabase) = try engine("laptop")
            try await laptopDatabase.save(RecordZone(zoneID: AssetTests.zoneID))
            let (file, photo) = try AssetTests.photoFile(200_000, seed: 11)
            defer { try? FileManager.default.removeItem(at: file) }
            let record = Record(
                recordType: "Contact", recordID: Record.ID(recordName: "ada", zoneID: AssetTests.zoneID))
            record.encryptedValues["name"] = "Ada"
            record["photo"] = Asset(fileURL: file)
            laptopDevice.toSend.withLock { $0 = record }
            laptop.state.add(pendingRecordZoneChanges: [.saveRecord(record.recordID)])
            try await laptop.sendChanges()
            #expect(laptopDevice.failedSaves.withLock { $0 }.isEmpty)

            let (phone, phoneDevice, phoneDatabase) = try engine("phone")
            try await phone.fetchChanges()
            #expect(phoneDevice.refused.withLock { $0 }.isEmpty)
            let fetched = try #require(phoneDevice.fetched.withLock { $0[record.recordID] })
            #expect(fetched.encryptedValues["name"] as? String == "Ada")
            let asset = try #require(fetched["photo"] as? Asset)
            let downloaded = try await phoneDatabase.fetchAssetContent(asset, of: record.recordID)
            #expect(try Data(contentsOf: downloaded) == photo)
            try? FileManager.default.removeItem(at: phoneDatabase.assetCache.directory)
        }
    }
}
