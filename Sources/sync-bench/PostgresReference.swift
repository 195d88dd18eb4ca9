import Foundation
import Logging
import PostgresNIO
import SyncCore
import SyncServer
import SyncTesting

/// The bare-PostgreSQL reference of `sync-bench server --storage postgres` (``BareStorageReference``): the rows
/// the server stores for the same records, written with the server's own statement
/// (``PostgresRecordStore/writeRows(_:owner:)``) into a database of its own with the server's schema, and read
/// back a page at a time; each account on a connection of the store's pool, all at once.
final class PostgresReference: BareStorage {
    let name = "PostgreSQL"
    let takesAccountsAtOnce = true
    /// The server and its backends do the work (``PostgresCPU``, read process by process).
    let runsOnPostgres = true
    private let store: PostgresRecordStore
    private let logger: Logger

    private init(store: PostgresRecordStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// The figures of `accounts`' rows in a new database on the PostgreSQL of ``TestPostgres``, with the
    /// server's schema, dropped afterwards (as ``SQLiteReference/measure(_:batch:page:)`` is SQLite's).
    /// - Parameter accounts: each account's records.
    static func measure(_ accounts: [[RecordValue]], batch: Int, page: Int) async throws
        -> BareStorageReference.Figures
    {
        let database = "sync_bench_reference_\(UUID().uuidString.prefix(8).lowercased())"
        return try await TestPostgres.withDatabase(database) { url in
            // Quiet: the schema's migrations are no news in a benchmark's output.
            var logger = Logger(label: "sync-bench.postgres-reference")
            logger.logLevel = .warning
            let store = try await PostgresRecordStore.connect(url: url, logger: logger)
            defer { store.close() }
            return try await BareStorageReference.measure(
                accounts, batch: batch, page: page, in: PostgresReference(store: store, logger: logger))
        }
    }

    func insert(_ batches: [[StoredRecord]], owner: String) async throws -> Duration {
        let start = ContinuousClock.now
        for batch in batches { try await store.writeRows(batch, owner: owner) }
        return ContinuousClock.now - start
    }

    func readPages(owner: String, zoneName: String, page: Int) async throws -> (rows: Int, bytes: Int) {
        var after: Int64 = 0
        var read = 0
        var bytes = 0
        let logger = logger
        while true {
            let from = after
            let fetched = try await store.withConnection { connection in
                var pageRows: [(seq: Int64, fields: Int)] = []
                let rows = try await connection.query(
                    """
                    SELECT * FROM record WHERE owner = \(owner) AND zone_name = \(zoneName) AND seq > \(from)
                    ORDER BY seq LIMIT \(page)
                    """, logger: logger)
                for try await row in rows {
                    let columns = row.makeRandomAccess()
                    pageRows.append(
                        (
                            try columns["seq"].decode(Int64.self),
                            try columns["fields"].decode(ByteBuffer.self).readableBytes
                        ))
                }
                return pageRows
            }
            guard let last = fetched.last else { break }
            bytes += fetched.reduce(0) { $0 + $1.fields }
            after = last.seq
            read += fetched.count
        }
        return (read, bytes)
    }
}
