import ArgumentParser
import Foundation
import GRDB
import SyncKit
import SyncTables
import SyncTesting

/// Declared tables (SyncTables) end to end, against a `sync-server` child process: notes and their
/// comments (a foreign key with a cascade, the notes' bodies encrypted) inserted and uploaded by device
/// A, downloaded by a new device B, a sync with nothing to do, and what the triggers add to a batch of
/// local inserts beside the same inserts into the same schema without the layer.
struct TablesBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tables",
        abstract: "SyncTables: rows of two related tables up and down, a no-op sync, the triggers' cost.")

    @Option(help: "How many rows, half notes and half their comments.")
    var rows = 10_000

    @Option(help: "How many times to time the no-op sync; the batches of inserts are timed three times as often.")
    var repeats = 15

    @Option(help: "Path of the sync-server executable (default: next to this one).")
    var server: String?

    @OptionGroup var saving: SavingOptions

    static let schema = """
        CREATE TABLE note (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL DEFAULT '',
            pinned INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE comment (id TEXT PRIMARY KEY NOT NULL, noteID TEXT NOT NULL REFERENCES note(id) ON DELETE CASCADE,
            text TEXT NOT NULL);
        """
    static let tables = [SyncedTable("note", encryptedColumns: ["body"]), SyncedTable("comment")]

    func run() async throws {
        let executable = try ServerProcess.executable(server)
        let process = try await ServerProcess.start(executable: executable)
        defer { process.stop() }
        var results = BenchResults(suite: "tables")
        results.measuring([executable])
        let directory = try TemporaryFiles.directory("sync-bench-tables")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notes = rows / 2

        func device(_ name: String) throws -> (DatabaseQueue, TableSync) {
            let database = try DatabaseQueue(path: "\(directory)/\(name).sqlite")
            try database.write { db in try db.execute(sql: Self.schema) }
            return (database, try started(on: database))
        }
        /// The layer on `database`, started as an app runs it (its engines sync when asked).
        func started(on database: DatabaseQueue) throws -> TableSync {
            var configuration = TableSync.Configuration()
            configuration.automaticallySync = false
            let sync = try TableSync(
                database: database, tables: Self.tables,
                container: Container(
                    identifier: "bench",
                    configuration: ContainerConfiguration(
                        serverURL: URL(string: process.baseURL)!, username: "bench",
                        password: "correct horse battery", signUp: true, passphrase: "orbit maple quiet lantern")),
                configuration: configuration)
            try sync.start()
            return sync
        }

        // Device A: the account, its zone and its keys first, so that the upload times the rows alone.
        let (a, syncA) = try device("a")
        try await a.write { db in try db.execute(sql: "INSERT INTO note (id, title) VALUES ('warm-up', 'warm-up')") }
        try await syncA.sendChanges()
        let insertStart = ContinuousClock.now
        try await a.write { db in try Self.insert(notes, prefix: "a", db) }
        let insertTime = (ContinuousClock.now - insertStart).inSeconds
        let uploadStart = ContinuousClock.now
        try await syncA.sendChanges()
        let upload = (ContinuousClock.now - uploadStart).inSeconds
        guard syncA.status.pendingCount == 0 else {
            throw ValidationError("device A still has \(syncA.status.pendingCount) changes pending after its upload")
        }

        let (b, syncB) = try device("b")
        let downloadStart = ContinuousClock.now
        try await syncB.fetchChanges()
        let download = (ContinuousClock.now - downloadStart).inSeconds
        let received = try await b.read { db in
            try Int.fetchOne(db, sql: "SELECT (SELECT COUNT(*) FROM note) + (SELECT COUNT(*) FROM comment)") ?? 0
        }
        guard received == rows + 1 else {
            throw ValidationError("device B has \(received) rows, expected \(rows + 1)")
        }
        var noops: [Double] = []
        for _ in 0..<repeats {
            let start = ContinuousClock.now
            try await syncB.sync()
            noops.append((ContinuousClock.now - start).inSeconds)
        }
        await syncA.stop()
        await syncB.stop()

        // The triggers' cost: the same inserts into the same schema, with and without the layer (started, as
        // an app runs it: what it does after the app's commit counts too); and beside them what SQLite asks
        // of any trigger (triggers that do nothing) and of any capture that a crash cannot lose (triggers that
        // append one short row to a table of their own). Each in a new file, the four interleaved, so that
        // the machine's drift touches them alike.
        enum Variant: CaseIterable { case plain, emptyTriggers, appendTriggers, layer }
        var times: [Variant: [Double]] = [:]
        for round in 0..<(repeats * 3) {
            for variant in Variant.allCases {
                let database = try DatabaseQueue(path: "\(directory)/inserts-\(round)-\(variant).sqlite")
                try await database.write { db in try db.execute(sql: Self.schema) }
                var layer: TableSync?
                switch variant {
                case .plain: break
                case .emptyTriggers:
                    try await database.write { db in
                        for table in ["note", "comment"] {
                            try db.execute(
                                sql: "CREATE TRIGGER \(table)_nothing AFTER INSERT ON \(table) BEGIN SELECT 1; END")
                        }
                    }
                case .appendTriggers:
                    try await database.write { db in
                        try db.execute(
                            sql:
                                "CREATE TABLE changes (seq INTEGER PRIMARY KEY, change INTEGER, recordName TEXT, at REAL)"
                        )
                        for (code, table) in [(1, "note"), (2, "comment")] {
                            try db.execute(
                                sql: """
                                    CREATE TRIGGER \(table)_append AFTER INSERT ON \(table) BEGIN
                                    INSERT INTO changes (change, recordName, at) VALUES (\(code), NEW.id, julianday('now')); END
                                    """)
                        }
                    }
                case .layer: layer = try started(on: database)
                }
                let start = ContinuousClock.now
                try await database.write { db in try Self.insert(notes, prefix: "r\(round)", db) }
                times[variant, default: []].append((ContinuousClock.now - start).inSeconds)
                await layer?.stop()
                layer = nil
            }
        }
        func median(_ runs: [Double]) -> Double {
            BenchResults.Figure(id: "", name: "", unit: "", better: .lower, runs: runs, target: nil).median
        }
        let plain = times[.plain] ?? []
        let synced = times[.layer] ?? []
        // Each round's ratio to the plain inserts of the same round, and their median: a commit's fsync
        // varies more from one moment to the next than the triggers cost, and pairs cancel the drift.
        func paired(_ variant: Variant) -> [Double] {
            zip(times[variant] ?? [], plain).map { $0 / $1 - 1 }
        }
        let ratios = paired(.layer)
        let floors = paired(.emptyTriggers)
        let appends = paired(.appendTriggers)

        let key = "tables.\(rows)"
        results.add(
            "\(key).insert.seconds", name: "\(rows) rows: insert on A (one transaction)", unit: "s", better: .lower,
            runs: [insertTime])
        results.add(
            "\(key).upload.seconds", name: "\(rows) rows: first upload from A", unit: "s", better: .lower,
            runs: [upload], target: 2)
        results.add(
            "\(key).download.seconds", name: "\(rows) rows: first download to B", unit: "s", better: .lower,
            runs: [download], target: 2)
        results.add(
            "\(key).noop.seconds", name: "sync on B with nothing to do (median of \(repeats))", unit: "s",
            better: .lower, runs: noops, target: 0.03)
        results.add(
            "\(key).inserts.plain.seconds", name: "\(rows) local inserts without the layer", unit: "s", better: .lower,
            runs: plain)
        results.add(
            "\(key).inserts.synced.seconds", name: "\(rows) local inserts with the layer's triggers", unit: "s",
            better: .lower, runs: synced)
        results.add(
            "\(key).inserts.emptyTriggers.ratio",
            name: "in-run reference: triggers that do nothing, beside the plain inserts (median of rounds)", unit: "×",
            better: .lower,
            runs: floors)
        results.add(
            "\(key).inserts.appendTriggers.ratio",
            name: "in-run reference: triggers that append one row, beside the plain inserts (median of rounds)",
            unit: "×", better: .lower, runs: appends)
        results.add(
            "\(key).inserts.cost.ratio", name: "the triggers' cost beside the plain inserts (median of rounds)",
            unit: "×", better: .lower,
            runs: ratios, target: 0.25)
        print(
            "sync-bench tables: \(notes) notes and \(rows - notes) comments, a sync-server child process over loopback")
        for figure in results.figures {
            let value: String
            switch figure.unit {
            case "s":
                value =
                    figure.median < 1
                    ? String(format: "%.1f ms", figure.median * 1000) : String(format: "%.2f s", figure.median)
            default: value = String(format: "%+.1f %%", figure.median * 100)
            }
            let target =
                figure.target.map { target in
                    let met = figure.median <= target
                    let shown =
                        figure.unit == "s"
                        ? (target < 1 ? "\(Int(target * 1000)) ms" : "\(Int(target)) s") : "\(Int(target * 100)) %"
                    return "  (target ≤ \(shown): \(met ? "met" : "not met"))"
                } ?? ""
            print("  \(figure.name): \(value)\(target)")
        }
        try results.save(to: saving.json)
    }

    /// `notes` notes, each with one comment, its body a sentence or two.
    static func insert(_ notes: Int, prefix: String, _ db: GRDB.Database) throws {
        let note = try db.makeStatement(sql: "INSERT INTO note (id, title, body, pinned) VALUES (?, ?, ?, ?)")
        let comment = try db.makeStatement(sql: "INSERT INTO comment (id, noteID, text) VALUES (?, ?, ?)")
        for index in 0..<notes {
            let id = "\(prefix)-note-\(index)"
            try note.execute(arguments: [
                id, "Note number \(index)", "Remember to water the plants and call about the invoice \(index).",
                index % 7 == 0,
            ])
            try comment.execute(arguments: ["\(prefix)-comment-\(index)", id, "A comment on note \(index)"])
        }
    }
}
