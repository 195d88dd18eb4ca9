import Foundation
import GRDB

/// Pages a large change leaves free go back to the file system. An upload empties an outbox that held an
/// entry for each contact (60 bytes a contact after an import, 60 MB in a million contacts' file); SQLite
/// keeps freed pages for later writes, which an outbox that large never needs again.
extension ContactStore {
    /// A file keeps free pages up to this fraction of itself (1 / n) for the writes to come.
    static let keptFreeShare = 16

    /// Releases the file's free pages when they are more than ``keptFreeShare`` allows; how many it released.
    /// Only a file with incremental auto-vacuum can: every file this version made, or upgraded (v14's
    /// rewrite); another keeps them for its later writes.
    @discardableResult
    package func releaseFreePages() throws -> Int {
        try write(durable: false) { transaction in
            let db = transaction.db
            guard try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") == 2 else { return 0 }
            let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            guard free > 0, free * Self.keptFreeShare > pages else { return 0 }
            try db.execute(sql: "PRAGMA incremental_vacuum")
            return free
        }
    }
}
