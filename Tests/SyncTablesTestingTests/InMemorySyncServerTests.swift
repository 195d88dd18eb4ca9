import Foundation
import GRDB
import SyncTables
import SyncTablesTesting
import SyncTesting
import Synchronization
import Testing

/// The same sync with the server in this process: no socket, nothing to start.
@Suite struct InMemoryTests {
    @Test("two devices sync through an in-memory server")
    func twoDevicesInMemory() async throws {
        let server = try await InMemorySyncServer.start()
        func device() throws -> (DatabaseQueue, TableSync) {
            let database = try DatabaseQueue()
            try database.write { db in
                try db.execute(sql: "CREATE TABLE note (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL)")
            }
            var configuration = TableSync.Configuration()
            configuration.automaticallySync = false
            let sync = try TableSync(
                database: database, tables: [SyncedTable("note")], container: server.container(username: "preview"),
                configuration: configuration)
            try sync.start()
            return (database, sync)
        }
        let (first, firstSync) = try device()
        let (second, secondSync) = try device()
        // What a status line shows: the change pending, then sending, then nothing pending.
        let seen = Mutex<[TableSync.Status]>([])
        let updates = firstSync.statusUpdates
        let watcher = Task {
            for await status in updates {
                seen.withLock { $0.append(status) }
                if status.pendingCount == 0 && !status.isSynchronizing && seen.withLock({ $0.count }) > 2 { return }
            }
        }
        try await first.write { db in try db.execute(sql: "INSERT INTO note (id, title) VALUES ('n1', 'Preview')") }
        try await waitUntil("the status counts the change") { firstSync.status.pendingCount == 1 }
        try await firstSync.sync()
        await watcher.value
        let statuses = seen.withLock { $0 }
        #expect(statuses.contains { $0.pendingCount == 1 })
        #expect(statuses.contains { $0.isSending && $0.isSynchronizing })
        #expect(statuses.last.map { $0.pendingCount == 0 && !$0.isSynchronizing && $0.isRunning } == true)
        try await secondSync.sync()
        #expect(try await second.read { db in try String.fetchOne(db, sql: "SELECT title FROM note") } == "Preview")
        #expect(secondSync.status.pendingCount == 0)
        await firstSync.stop()
        await secondSync.stop()
        try await server.stop()
    }
}
