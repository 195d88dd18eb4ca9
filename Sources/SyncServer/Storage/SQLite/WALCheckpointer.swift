import Dispatch
import GRDB
import GRDBSQLite
import Synchronization

/// Copies the store's write-ahead log into its file on a connection and a thread of its own.
///
/// SQLite's own rule checkpoints at the commit that takes the log past 1,000 pages, on the writing
/// connection: and the server has one writer, which every account's saves wait for. Under a steady
/// upload that writer was busy nearly all the time, and a ninth of its time was checkpoints. With
/// this, a commit past ``backgroundPages`` asks for a checkpoint here and goes on; the writer
/// checkpoints itself only when the log reaches ``writerPages`` (the checkpointer held up, or not
/// started yet), so the log stays bounded whatever happens here.
///
/// The checkpoints are SQLite's `PASSIVE` kind: they copy what no reader still needs and wait for
/// nobody, as the writer's own did.
public final class WALCheckpointer: Sendable {
    /// The log's size, in pages, at which a commit asks for a checkpoint here (SQLite's own threshold).
    public let backgroundPages: Int32
    /// The log's size, in pages, at which the writer checkpoints itself (64 MiB of 4 KiB pages).
    public let writerPages: Int32

    private let connection = Mutex<DatabaseQueue?>(nil)
    private let pending = Atomic<Bool>(false)
    private let queue = DispatchQueue(label: "sync-server.wal-checkpoint", qos: .utility)
    private let background = Atomic<Int>(0)
    private let onWriter = Atomic<Int>(0)

    public init(backgroundPages: Int32 = 1000, writerPages: Int32 = 16_000) {
        precondition(0 < backgroundPages && backgroundPages < writerPages)
        self.backgroundPages = backgroundPages
        self.writerPages = writerPages
    }

    /// Checkpoints done here, and by the writer itself (for tests and benchmarks).
    public var checkpoints: (background: Int, onWriter: Int) {
        (background.load(ordering: .relaxed), onWriter.load(ordering: .relaxed))
    }

    /// Makes every write transaction of `configuration`'s connections report its commits here,
    /// in place of SQLite's own checkpoints at commit.
    public func install(in configuration: inout Configuration) {
        // A connection keeps its configuration, and so this checkpointer, alive as long as it is
        // open: the hook's unretained pointer cannot outlive its target.
        configuration.prepareDatabase { [self] db in
            // Readers never commit a write: the writer is the one connection that needs it.
            guard !db.configuration.readonly else { return }
            sqlite3_wal_hook(db.sqliteConnection, walHook, Unmanaged.passUnretained(self).toOpaque())
        }
    }

    /// Starts checkpointing the file at `path` (its schema made already), on a connection of its own.
    /// Until then, only the writer's own checkpoints at ``writerPages`` bound the log.
    public func start(path: String) throws {
        let opened = try DatabaseQueue(path: path)
        connection.withLock { $0 = opened }
    }

    /// Called by the hook after every commit, on the writer, with the log's size in pages.
    fileprivate func committed(frames: Int32, connection db: OpaquePointer?, name: UnsafePointer<CChar>?) {
        if frames >= writerPages {
            // SQLITE_BUSY (a checkpoint here under way) is no harm: the next commit tries again.
            if sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_OK {
                onWriter.add(1, ordering: .relaxed)
            }
        } else if frames >= backgroundPages,
            pending.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        {
            queue.async { self.checkpoint() }
        }
    }

    private func checkpoint() {
        // Cleared first: a commit from now on asks again, and is not lost behind this one.
        pending.store(false, ordering: .releasing)
        guard let database = connection.withLock({ $0 }) else { return }
        // Busy (the writer checkpointing at its limit) or failing, the next request tries again.
        if (try? database.writeWithoutTransaction({ try $0.checkpoint(.passive) })) != nil {
            background.add(1, ordering: .relaxed)
        }
    }
}

/// SQLite's WAL hook: `context` is the ``WALCheckpointer``.
private func walHook(
    context: UnsafeMutableRawPointer?, db: OpaquePointer?, name: UnsafePointer<CChar>?, frames: Int32
) -> Int32 {
    guard let context else { return SQLITE_OK }
    Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(
        frames: frames, connection: db, name: name)
    return SQLITE_OK
}
