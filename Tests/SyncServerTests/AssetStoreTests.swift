import Foundation
import NIOCore
import SyncCore
import SyncServer
import SyncTesting
import Synchronization
import TestTraits
import Testing

/// The stores' assets: uploads taking their bytes in order and resuming after a cut, reads of any
/// range, the quota, and the collection of what no record names; on both backends.
@Suite("Asset storage: uploads resume, reads stream any range, nothing named by no record stays", .onEveryBackend)
struct AssetStoreTests {
    static func bytes(_ count: Int, seed: UInt8 = 1) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ Int(seed)) }
    }

    /// A body delivering `pieces`, then ending, or failing as a cut connection does.
    static func body(_ pieces: [[UInt8]], cutAfter: Bool = false) -> AsyncThrowingStream<ByteBuffer, any Error> {
        AsyncThrowingStream { continuation in
            for piece in pieces { continuation.yield(ByteBuffer(bytes: piece)) }
            continuation.finish(throwing: cutAfter ? CancellationError() : nil)
        }
    }

    static func read(_ store: any RecordStore, _ id: String, _ range: Range<Int64>) async throws -> [UInt8] {
        var read: [UInt8] = []
        try await store.readAsset(id: id, range: range) { read += Array(buffer: $0) }
        return read
    }

    /// A server with `quota` bytes per account, and Ada's account ID on it.
    private func withAda<T>(quota: Int64? = 1 << 30, _ body: (TestServer, String) async throws -> T) async throws -> T {
        var configuration = SyncServerConfiguration.testing
        configuration.defaultQuotaBytes = quota
        return try await withServer(configuration: configuration) { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            return try await body(server, try await ada.account().userRecordName)
        }
    }

    /// A server where Ada has saved one record; her client and account ID, and the record.
    private func withAdasRecord<T>(_ body: (TestServer, TestClient, String, RecordValue) async throws -> T)
        async throws -> T
    {
        try await withServer { server, anonymous in
            let client = try await anonymous.signedUp(username: "ada")
            try await client.saveZones("Contacts")
            var record = RecordValue(
                recordType: "Contact", recordID: RecordValue.ID(recordName: "ada", zoneID: contactsZone))
            record["name"] = "Ada"
            _ = try await client.save([record])
            return try await body(server, client, try await client.account().userRecordName, record)
        }
    }

    @Test(
        "an upload takes its bytes in several requests; whole and in ranges they read back as sent; its size counts in the uploader's storage"
    )
    func uploadAndRead() async throws {
        try await withAda { server, ada in
            let store = server.store
            let content = Self.bytes(700_000)
            let id = AssetReference.newID()
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            try await store.createAssetUpload(id: id, uploader: ada, size: Int64(content.count), now: now)
            #expect(try await store.storageUsage(owner: ada).usedBytes == 700_000, "counted at once")
            var asset = try await store.appendToAsset(id: id, at: 0, Self.body([Array(content[0..<1000])]), now: now)
            #expect(asset.received == 1000 && !asset.isComplete)
            asset = try await store.appendToAsset(
                id: id, at: 1000, Self.body([Array(content[1000..<300_000]), Array(content[300_000...])]), now: now)
            #expect(asset.isComplete && asset.received == 700_000 && asset.uploader == ada)
            #expect(try await store.asset(id: id) == asset)
            #expect(try await Self.read(store, id, 0..<700_000) == content)
            #expect(try await Self.read(store, id, 262_140..<262_150) == Array(content[262_140..<262_150]))
            #expect(try await Self.read(store, id, 699_999..<700_000) == [content[699_999]])
            let done = await syncError {
                _ = try await store.appendToAsset(id: id, at: 700_000, Self.body([[1]]), now: now)
            }
            #expect(
                done?.code == .constraintViolation && done?.message.contains("complete") == true,
                "\(String(describing: done))")
            let none = await syncError {
                _ = try await store.appendToAsset(id: AssetReference.newID(), at: 0, Self.body([[1]]), now: now)
            }
            #expect(none?.code == .unknownItem, "\(String(describing: none))")
        }
    }

    @Test(
        "a body cut off keeps what arrived; bytes sent from elsewhere are refused naming where the upload stands; it resumes and completes"
    )
    func resume() async throws {
        try await withAda { server, ada in
            let store = server.store
            let content = Self.bytes(100_000, seed: 9)
            let id = AssetReference.newID()
            let now = Date()
            try await store.createAssetUpload(id: id, uploader: ada, size: 100_000, now: now)
            let cut = await #expect(throws: CancellationError.self) {
                _ = try await store.appendToAsset(
                    id: id, at: 0, Self.body([Array(content[0..<40_000])], cutAfter: true), now: now)
            }
            #expect(cut != nil)
            #expect(try await store.asset(id: id)?.received == 40_000, "what arrived is kept")
            let wrong = await syncError {
                _ = try await store.appendToAsset(id: id, at: 0, Self.body([content]), now: now)
            }
            #expect(
                wrong?.code == .constraintViolation && wrong?.message.contains("from byte 40000") == true,
                "\(String(describing: wrong))")
            let asset = try await store.appendToAsset(
                id: id, at: 40_000, Self.body([Array(content[40_000...])]), now: now)
            #expect(asset.isComplete)
            #expect(try await Self.read(store, id, 0..<100_000) == content)
        }
    }

    @Test("more bytes than the upload lacks: refused, what fitted kept")
    func tooManyBytes() async throws {
        try await withAda { server, ada in
            let id = AssetReference.newID()
            try await server.store.createAssetUpload(id: id, uploader: ada, size: 10, now: Date())
            let error = await syncError {
                _ = try await server.store.appendToAsset(
                    id: id, at: 0, Self.body([Self.bytes(8), Self.bytes(8)]), now: Date())
            }
            #expect(
                error?.code == .invalidArguments && error?.message.contains("what fitted is kept") == true,
                "\(String(describing: error))")
            #expect(try await server.store.asset(id: id)?.isComplete == true)
            #expect(try await Self.read(server.store, id, 0..<10) == Self.bytes(8) + Self.bytes(2))
        }
    }

    @Test("an upload the quota cannot hold is refused with quotaExceeded, and nothing is made")
    func quota() async throws {
        try await withAda(quota: 1_000) { server, ada in
            let id = AssetReference.newID()
            let error = await syncError {
                try await server.store.createAssetUpload(id: id, uploader: ada, size: 1_001, now: Date())
            }
            #expect(error?.code == .quotaExceeded, "\(String(describing: error))")
            #expect(try await server.store.asset(id: id) == nil)
            #expect(try await server.store.storageUsage(owner: ada).usedBytes == 0)
            try await server.store.createAssetUpload(id: id, uploader: ada, size: 1_000, now: Date())
        }
    }

    @Test(
        "collection: an upload no record names goes after its lifetime; an asset goes once its record is gone, after the retention; usage follows"
    )
    func collection() async throws {
        try await withAdasRecord { server, client, ada, record in
            let store = server.store
            let recordBytes = try await store.storageUsage(owner: ada).usedBytes
            let day = Date(timeIntervalSince1970: 1_800_000_000)
            let (stale, fresh, named) = (AssetReference.newID(), AssetReference.newID(), AssetReference.newID())
            for id in [stale, fresh, named] {
                try await store.createAssetUpload(
                    id: id, uploader: ada, size: 5, now: id == fresh ? day : day.addingTimeInterval(-86_400))
                _ = try await store.appendToAsset(id: id, at: 0, Self.body([Self.bytes(5)]), now: day)
            }
            try await store.attachAssets([named], to: AssetPlace(owner: ada, key: RecordKey(record.recordID)), now: day)
            var collected = try await store.collectAssets(
                detachedBefore: day.addingTimeInterval(-3600), uploadsBefore: day.addingTimeInterval(-3600), now: day)
            #expect(collected == AssetCollection(assets: 1, bytes: 5), "only the stale upload")
            #expect(try await store.asset(id: stale) == nil)
            #expect(try await store.asset(id: fresh) != nil)
            #expect(try await store.asset(id: named)?.record == AssetPlace(owner: ada, key: RecordKey(record.recordID)))
            #expect(try await store.storageUsage(owner: ada).usedBytes == recordBytes + 10)

            // The record is deleted: its asset is marked at the next collection, and goes after the retention.
            _ = try await client.modifyRecords(ModifyRecordsRequest(saves: [], deletes: [record.recordID]))
            let later = day.addingTimeInterval(7200)
            collected = try await store.collectAssets(
                detachedBefore: day, uploadsBefore: day.addingTimeInterval(-3600), now: later)
            #expect(collected.assets == 0, "marked, not yet removed")
            #expect(try await store.asset(id: named)?.detachedAt == later)
            collected = try await store.collectAssets(
                detachedBefore: later.addingTimeInterval(1), uploadsBefore: day.addingTimeInterval(-3600),
                now: later.addingTimeInterval(2))
            #expect(collected == AssetCollection(assets: 1, bytes: 5))
            #expect(try await store.asset(id: named) == nil)
            #expect(
                try await store.storageUsage(owner: ada).usedBytes == 5,
                "the fresh upload alone; the record's fields went with it")
        }
    }

    @Test("a deleted account's assets and uploads go at the next collection, not after the retention")
    func deletedAccount() async throws {
        try await withAdasRecord { server, client, ada, record in
            let store = server.store
            let (named, loose) = (AssetReference.newID(), AssetReference.newID())
            for id in [named, loose] {
                try await store.createAssetUpload(id: id, uploader: ada, size: 3, now: Date())
            }
            try await store.attachAssets(
                [named], to: AssetPlace(owner: ada, key: RecordKey(record.recordID)), now: Date())
            _ = try await store.deleteAccount(userRecordName: ada, at: Date())
            let collected = try await store.collectAssets(
                detachedBefore: Date().addingTimeInterval(-3600), uploadsBefore: Date().addingTimeInterval(-3600),
                now: Date())
            #expect(collected == AssetCollection(assets: 2, bytes: 6))
            #expect(try await store.asset(id: named) == nil)
            #expect(try await store.asset(id: loose) == nil)
        }
    }

    @Test(
        "two requests sending the same bytes of one upload at once: one is refused, and the upload holds the other's bytes"
    )
    func concurrentAppends() async throws {
        try await withAda { server, ada in
            let store = server.store
            let id = AssetReference.newID()
            try await store.createAssetUpload(id: id, uploader: ada, size: 1_000, now: Date())
            // The first request's body arrives in part, then waits: its request is in flight.
            let (held, continuation) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
            continuation.yield(ByteBuffer(bytes: Self.bytes(400, seed: 1)))
            let body = ReadBody(held)
            let first = Task { try await store.appendToAsset(id: id, at: 0, body, now: Date()) }
            try await waitUntil("the first request has read the first part of its body") { body.hasBeenRead }
            // SQLite refuses the second at once (one request per upload); PostgreSQL stores the second's
            // bytes, and the first finds the upload moved under it when it stores its own.
            let second: Result<StoredAsset, any Error>
            do {
                second = .success(
                    try await store.appendToAsset(id: id, at: 0, Self.body([Self.bytes(1_000, seed: 2)]), now: Date()))
            } catch {
                second = .failure(error)
            }
            continuation.yield(ByteBuffer(bytes: Self.bytes(600, seed: 3)))
            continuation.finish()
            let firstResult = await first.result
            let outcomes = [firstResult, second]
            let refused = outcomes.compactMap { outcome -> SyncError? in
                if case .failure(let error) = outcome { return error as? SyncError }
                return nil
            }
            #expect(refused.count == 1, "exactly one is refused: \(outcomes)")
            #expect(refused.first?.code == .constraintViolation, "\(refused)")
            let content = try await Self.read(store, id, 0..<1_000)
            if case .success = second {
                #expect(content == Self.bytes(1_000, seed: 2), "the second request's bytes")
            } else {
                #expect(content == Self.bytes(400, seed: 1) + Self.bytes(600, seed: 3), "the first request's bytes")
            }
        }
    }
}

/// A request body that says when it has been read from.
final class ReadBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    private let base: AsyncThrowingStream<ByteBuffer, any Error>
    private let read = Mutex(false)

    init(_ base: AsyncThrowingStream<ByteBuffer, any Error>) { self.base = base }

    var hasBeenRead: Bool { read.withLock { $0 } }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<ByteBuffer, any Error>.AsyncIterator
        let body: ReadBody

        mutating func next() async throws -> ByteBuffer? {
            let element = try await base.next()
            body.read.withLock { $0 = true }
            return element
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), body: self) }
}

/// SQLite's asset files: private, written so that a crash loses nothing acknowledged.
@Suite("Asset files on SQLite: private, and a crash mid-write resumes from what was acknowledged")
struct AssetFileTests {
    @Test(
        "the bytes live in <database>-assets (0700), one file per asset (0600); bytes written after the last acknowledged count are cut on resume"
    )
    func filesAndCrash() async throws {
        let path = TemporaryFiles.path("assets", extension: "sqlite")
        defer {
            TemporaryFiles.removeSQLite(path)
            try? FileManager.default.removeItem(atPath: path + "-assets")
        }
        let store = try SQLiteRecordStore(path: path)
        try await store.createAccount(
            StoredAccount(userRecordName: "_ada", username: "ada", passwordHash: "x", createdAt: Date()))
        let id = AssetReference.newID()
        let content = AssetStoreTests.bytes(3_000)
        try await store.createAssetUpload(id: id, uploader: "_ada", size: 3_000, now: Date())
        _ = try await store.appendToAsset(
            id: id, at: 0, AssetStoreTests.body([Array(content[0..<1_000])]), now: Date())
        let directory = path + "-assets"
        let part = "\(directory)/\(id).part"
        #expect(try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int == 0o700)
        #expect(try FileManager.default.attributesOfItem(atPath: part)[.posixPermissions] as? Int == 0o600)
        // As after a crash between writing bytes and storing their count: the file holds more than counted.
        let handle = try #require(FileHandle(forWritingAtPath: part))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0xEE, count: 500))
        try handle.close()
        #expect(try await store.asset(id: id)?.received == 1_000)
        let asset = try await store.appendToAsset(
            id: id, at: 1_000, AssetStoreTests.body([Array(content[1_000...])]), now: Date())
        #expect(asset.isComplete)
        #expect(!FileManager.default.fileExists(atPath: part), "renamed once complete")
        #expect(FileManager.default.contents(atPath: "\(directory)/\(id)") == Data(content))
        #expect(try await AssetStoreTests.read(store, id, 0..<3_000) == content)
        // Collected: its file goes with its row.
        _ = try await store.collectAssets(detachedBefore: .distantPast, uploadsBefore: .distantFuture, now: Date())
        #expect(!FileManager.default.fileExists(atPath: "\(directory)/\(id)"))
        #expect(try await store.asset(id: id) == nil)
    }
}
