import CSQLiteConfig
import Foundation
import GRDB
import LocalSystem

/// The write-ahead log between commands. Each `contacts` command is a process of its own; when it closed
/// the file, SQLite copied the log into it, flushed the file and deleted the log, and the next command made
/// and flushed a new one: a few milliseconds of every command, most of a no-op sync's disk time. The log
/// now stays for the next command, which reads it back when it opens the file, as long as it is small.
extension ContactStore {
    /// The most log a closing store leaves for the next one to read back: more is copied into the file and
    /// the log cut to nothing, so that a command after a large import does not read 40 MB of log first.
    static let logKeptOnClose = 1_048_576

    /// Makes SQLite leave the log when `db`, the file's last connection, closes (the store decides at
    /// ``checkpointLargeLog()``).
    static func keepLogOnClose(_ db: Database) {
        _ = csqlite_keep_log_on_close(db.sqliteConnection)
    }

    /// The log's size now, in bytes; 0 when there is none.
    var logBytes: Int {
        FileStatus.ifPresent(path + "-wal", followingSymbolicLinks: true).map { Int($0.size) } ?? 0
    }

    /// Before the store closes: a log larger than ``logKeptOnClose`` is copied into the file and cut to
    /// nothing. A failure (another process writing, say) leaves it for the next checkpoint: nothing is lost.
    func checkpointLargeLog() {
        guard logBytes > Self.logKeptOnClose else { return }
        try? queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
    }
}
