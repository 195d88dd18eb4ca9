import Foundation
import GRDB
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// The SQLite store's write-ahead log is copied into its file off the writer (``WALCheckpointer``), and
/// stays bounded when that cannot happen: real files, real commits.
@Suite("SQLite: the log is checkpointed off the writer, and bounded by the writer when it must be")
struct WALCheckpointTests {
    /// A throw-away file with the server's schema.
    private static func withFile(_ body: (String) async throws -> Void) async throws {
        let path = TemporaryFiles.path("wal", extension: "sqlite")
        defer { TemporaryFiles.removeSQLite(path) }
        _ = try SQLiteRecordStore(path: path)
        try await body(path)
    }

    /// Saves `batches` transactions of eight records of 4 KiB of fields each: about ten pages a commit.
    private static func write(batches: Int, to pool: DatabasePool) throws {
        for batch in 0..<batches {
            let rows = (0..<8).map { index in
                StoredRecord(
                    key: RecordKey(zoneName: "Contacts", recordName: "r\(batch)-\(index)"), recordType: "Contact",
                    fields: Data(repeating: UInt8(index), count: 4096), changeTag: "t", createdAt: 0, creator: "_ada",
                    modifiedAt: 0, modifier: "_ada", seq: Int64(batch * 8 + index + 1), isDeleted: false)
            }
            try pool.write { try SQLiteRecordStore.writeRows(rows, owner: "_ada", $0) }
        }
    }

    /// The log's frames, and how many of them are in the file, as a checkpoint of another connection sees.
    private static func logFrames(_ path: String) throws -> (frames: Int, copied: Int) {
        let (frames, copied) = try DatabaseQueue(path: path).writeWithoutTransaction { try $0.checkpoint(.passive) }
        return (frames, copied)
    }

    @Test(
        "commits past the threshold are checkpointed by the checkpointer, never by the writer; every row reads back"
    )
    func offTheWriter() async throws {
        try await Self.withFile { path in
            let checkpointer = WALCheckpointer(backgroundPages: 20, writerPages: 100_000)
            let pool = try DatabasePool(
                path: path, configuration: SQLiteRecordStore.configuration(checkpointer: checkpointer))
            try checkpointer.start(path: path)
            try Self.write(batches: 30, to: pool)
            try await waitUntil("the checkpointer has checkpointed") {
                checkpointer.checkpoints.background > 0
            } observed: {
                "\(checkpointer.checkpoints)"
            }
            #expect(checkpointer.checkpoints.onWriter == 0)
            let count = try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM record") }
            #expect(count == 240)
        }
    }

    @Test("with no checkpointer running, the writer checkpoints at its limit and the log stays within it")
    func boundedByTheWriter() async throws {
        try await Self.withFile { path in
            // Never started: as if its thread were held up for the whole upload.
            let held = WALCheckpointer(backgroundPages: 10, writerPages: 60)
            let pool = try DatabasePool(path: path, configuration: SQLiteRecordStore.configuration(checkpointer: held))
            // About a thousand pages in all: the log would hold them all without a checkpoint.
            try Self.write(batches: 100, to: pool)
            #expect(held.checkpoints.background == 0)
            #expect(held.checkpoints.onWriter > 0)
            // The commit that passes the limit checkpoints after it is written (a commit here is about
            // 36 pages), and the next one starts the log again from its beginning.
            let bound = 2 * 60
            let (frames, copied) = try Self.logFrames(path)
            #expect(frames < bound, "the log restarted after each checkpoint: \(frames) frames, \(copied) copied")
            let walBytes = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
            #expect(
                walBytes < bound * (4096 + 24) + 32,
                "\(walBytes) bytes of log, where 100 commits wrote about 3,600 pages")
            let count = try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM record") }
            #expect(count == 800)
        }
    }

    @Test("the store's own checkpointer runs: an upload's commits are copied into the file off the writer")
    func storeStartsItsCheckpointer() async throws {
        try await Self.withFile { path in
            let store = try SQLiteRecordStore(
                path: path, checkpointer: WALCheckpointer(backgroundPages: 20, writerPages: 100_000))
            let account = StoredAccount(
                userRecordName: "_ada", username: "ada", passwordHash: "x", createdAt: Date(), isDisabled: false)
            try await store.createAccount(account)
            _ = try await store.modifyZones(
                owner: "_ada", saves: [StoredZone(zoneName: "Contacts")], deletes: [], now: Date())
            for batch in 0..<20 {
                let saves = (0..<20).map { index in
                    var record = RecordValue(
                        recordType: "Contact",
                        recordID: RecordValue.ID(
                            recordName: "c\(batch)-\(index)", zoneID: RecordZone.ID(zoneName: "Contacts")))
                    record["note"] = .string(String(repeating: "n", count: 1000))
                    return record
                }
                let outcome = try await store.modifyRecords(
                    owner: "_ada", modifier: "_ada", writer: "", request: ModifyRecordsRequest(saves: saves),
                    limits: ServerLimits(), now: Date(), hierarchyAccess: [:])
                #expect(outcome.changed)
            }
            try await waitUntil("the store's checkpointer has checkpointed") {
                store.checkpointer.checkpoints.background > 0
            } observed: {
                "\(store.checkpointer.checkpoints)"
            }
            #expect(store.checkpointer.checkpoints.onWriter == 0)
        }
    }
}
