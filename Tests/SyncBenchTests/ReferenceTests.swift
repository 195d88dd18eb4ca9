import Foundation
import LocalSystem
import SyncCore
import SyncTesting
import Testing

@testable import sync_bench

/// `sync-bench server`'s references: the plain HTTP server answers each request with the bytes it was given for
/// it and nothing else, and a whole run saves the server's figures beside both references'. One test at a time:
/// a run on PostgreSQL checks that it leaves none of the databases it made, which the test of the bare
/// PostgreSQL reference beside it would otherwise be making at the same moment.
@Suite("sync-bench server references", .serialized)
struct ReferenceTests {
    /// The built `sync-bench`, next to the test runner.
    static let program = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("sync-bench").path

    /// Two accounts' contacts, 5 and 7, for the bare references.
    static let accounts = [(0..<5), (5..<12)].map { range in
        range.map { BenchSupport.contactRecord($0, zone: RecordZone.ID(zoneName: "Contacts")) }
    }

    @Test("the plain HTTP server answers a request with the answer it names, as it was stored, and 404 otherwise")
    func plainServerReplaysAnswers() async throws {
        let server = try await ServerProcess.start(named: "reference-server") { _ in
            [Self.program, "reference-server"]
        }
        defer { server.stop() }
        let client = TestClient(baseURL: server.baseURL)
        let answer = Data(#"{"saved":[],"failedRecordSaves":[]}"#.utf8)
        #expect(try await client.send(.put, "/answers/up.0.0", body: answer).status == 204)

        let replayed = try await client.send(
            .post, "/v1/databases/private/records/modify", body: Data(repeating: 0x20, count: 100_000),
            headers: [(ReferenceServerCommand.answerHeader, "up.0.0")])
        #expect(replayed.status == 200)
        #expect(replayed.body == answer)
        #expect(replayed.header("Content-Type") == "application/json")

        let unknown = try await client.send(
            .post, "/anything", body: Data(), headers: [(ReferenceServerCommand.answerHeader, "up.0.1")])
        #expect(unknown.status == 404)
        #expect(try await client.send(.post, "/anything", body: Data()).status == 404)
    }

    @Test("SQLite inserts every account's rows and reads each back, page by page")
    func sqliteReadsBackEveryRow() async throws {
        let figures = try await SQLiteReference.measure(Self.accounts, batch: 2, page: 3)
        #expect(figures.upload > 0 && figures.upload.isFinite)
        #expect(figures.download > 0 && figures.download.isFinite)
    }

    @Test(
        "PostgreSQL inserts every account's rows with the server's statement and reads each back, page by page",
        .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
    func postgresReadsBackEveryRow() async throws {
        let figures = try await PostgresReference.measure(Self.accounts, batch: 2, page: 3)
        #expect(figures.upload > 0 && figures.upload.isFinite)
        #expect(figures.download > 0 && figures.download.isFinite)
        // PostgreSQL's own processes did the work: their CPU is counted. /proc counts it in ticks of 10 ms, so
        // enough rows for a few ticks (1,000, in statements of 10); a figure that went down would be below 0.
        let more = [(0..<500), (500..<1000)].map { range in
            range.map { BenchSupport.contactRecord($0, zone: RecordZone.ID(zoneName: "Contacts")) }
        }
        let counted = try await PostgresReference.measure(more, batch: 10, page: 100)
        #expect(counted.uploadCPU > 0 && counted.downloadCPU >= 0, "\(counted)")
    }

    @Test("PostgreSQL's CPU is each process's growth: a process that ended, or whose ID came back, takes nothing away")
    func postgresCPUOnlyGrows() {
        let earlier = PostgresCPU(seconds: ["10": 1.0, "11": 5.0, "12": 2.0])
        // 10 grew by 0.5; 11 ended (its time went to whoever reaped it); 12 is a new process under an old ID;
        // 13 began meanwhile.
        let now = PostgresCPU(seconds: ["10": 1.5, "12": 0.25, "13": 0.25])
        #expect(now.since(earlier) == 0.75)
        #expect(earlier.since(earlier) == 0)
        #expect(now.since(PostgresCPU()) == 2.0)
    }

    @Test(
        "a run on PostgreSQL saves the server's rates beside bare PostgreSQL's, and drops the databases it made",
        .enabled(if: TestPostgres.url != nil, "\(TestPostgres.notConfigured)"))
    func postgresRunSavesReferences() async throws {
        let directory = URL(fileURLWithPath: TemporaryFiles.path("sync-bench"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let databasesBefore = try await Self.benchDatabases()
        let json = directory.appendingPathComponent("server.json").path
        let outcome = try await ChildProcess.run([
            Self.program, "server", "--storage", "postgres", "--records", "120", "--clients", "2", "--batch", "50",
            "--page", "40", "--runs", "1", "--json", json,
        ])
        #expect(outcome.status == 0, "\(outcome.output)\(outcome.error)")
        #expect(outcome.output.contains("of bare PostgreSQL's up"), "\(outcome.output)")
        let figures = Dictionary(
            try BenchResults.load(json).figures.map { ($0.id, $0.runs) }, uniquingKeysWith: { first, _ in first })
        for suffix in [
            "upload.recordsPerSecond", "download.recordsPerSecond", "reference.postgres.upload.recordsPerSecond",
            "reference.postgres.download.recordsPerSecond",
        ] {
            let runs = figures["server.postgres.120.2clients.\(suffix)"]
            #expect(runs?.count == 1 && (runs?.first ?? 0) > 0, "\(suffix): \(figures.keys.sorted())")
        }
        #expect(try await Self.benchDatabases() == databasesBefore)
    }

    @Test("without a PostgreSQL, --storage postgres says how to give one and measures nothing")
    func postgresNeedsAnAddress() async throws {
        let outcome = try await ChildProcess.run(
            [Self.program, "server", "--storage", "postgres", "--runs", "1"],
            environment: ["SYNC_TEST_POSTGRES_URL": nil])
        #expect(outcome.status != 0)
        #expect(outcome.error.contains("pass --postgres URL"), "\(outcome.error)")
        #expect(!outcome.output.contains("upload rec/s"), "\(outcome.output)")
    }

    /// The databases `sync-bench` made on the tests' PostgreSQL and has not dropped.
    private static func benchDatabases() async throws -> [String] {
        try await TestPostgres.databases().filter { $0.hasPrefix("sync_bench_") }.sorted()
    }

    @Test("a run with two clients saves the server's rates, its CPU split, and both references'")
    func serverRunSavesReferences() async throws {
        let directory = URL(fileURLWithPath: TemporaryFiles.path("sync-bench"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let json = directory.appendingPathComponent("server.json").path
            let outcome = try await ChildProcess.run([
                Self.program, "server", "--records", "200", "--clients", "2", "--batch", "50", "--page", "40",
                "--runs", "1", "--json", json,
            ])
            #expect(outcome.status == 0, "\(outcome.output)\(outcome.error)")
            #expect(outcome.output.contains("plain HTTP, no work"), "\(outcome.output)")
            let figures = Dictionary(
                try BenchResults.load(json).figures.map { ($0.id, $0.runs) }, uniquingKeysWith: { first, _ in first })
            let id = "server.sqlite.200.2clients"
            for suffix in [
                "upload.recordsPerSecond", "download.recordsPerSecond", "upload.serverCPUPerThousand",
                "upload.clientCPUPerThousand", "reference.plainHTTP.upload.recordsPerSecond",
                "reference.plainHTTP.download.recordsPerSecond", "reference.plainHTTP.upload.serverCPUPerThousand",
                "reference.sqlite.upload.recordsPerSecond", "reference.sqlite.download.recordsPerSecond",
            ] {
                let runs = figures["\(id).\(suffix)"]
                #expect(runs?.count == 1, "\(suffix): \(figures.keys.sorted())")
                #expect((runs?.first ?? -1) >= 0, "\(suffix): \(runs ?? [])")
            }
            #expect((figures["\(id).upload.recordsPerSecond"]?.first ?? 0) > 0)
        }
    }
}
