import ContactsModel
import GRDB

extension ContactStore {
    /// Rewrites the file without its free pages and empties the write-ahead log, so that what was deleted (a
    /// passphrase, a key) is gone from the disk's copy of the file, not only from its tables. Costs a copy of
    /// the file: for rare moments such as signing out.
    func eraseFreedSpace() throws {
        try queue.vacuum()
        // The old pages were copied into the log: write the new ones back and cut the log to nothing.
        try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
    }
}
