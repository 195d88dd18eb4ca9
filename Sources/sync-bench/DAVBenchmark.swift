import ArgumentParser
import AsyncHTTPClient
import ContactsModel
import ContactsStore
import Foundation
import NIOCore
import NIOHTTP1
import SyncTesting

#if canImport(Glibc)
    import Glibc
#endif

/// Measures the CardDAV bridge as its users meet it: `contacts dav` serving a device of N contacts (a
/// release `contacts` and `sync-server`), and Debian's vdirsyncer syncing a vdir with it, whole commands
/// with its own start included: the first download into an empty vdir (the median of fresh vdirs) and a
/// sync with nothing to do. Then edits a DAV client PUTs, each timed until another device (automatic sync,
/// as the full-screen app runs it) has it and tells its screen to redraw (`contactsChanged`), by push.
struct DAVBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dav",
        abstract:
            "The CardDAV bridge: vdirsyncer's first download and no-op sync, a PUT reaching another device by push.")

    @Option(help: "How many generated contacts (when no --cards).") var count = 1_000
    @Option(help: "A directory of .vcf files to serve instead (../shared/peerbench/gen_vcards.py makes the peer's).")
    var cards: String?
    @Option(help: "Runs of each timed vdirsyncer step (the median is printed).") var runs = 5
    @Option(help: "Edits PUT and timed to the other device.") var edits = 30
    @OptionGroup var programs: ProgramOptions
    @Option(help: "Path of vdirsyncer.") var vdirsyncer = "/usr/bin/vdirsyncer"

    func validate() throws {
        guard count > 0, runs > 0, edits > 0 else {
            throw ValidationError("--count, --runs and --edits must be positive")
        }
        guard FileManager.default.isExecutableFile(atPath: vdirsyncer) else {
            throw ValidationError("no vdirsyncer at \(vdirsyncer): `apt install vdirsyncer`, or pass --vdirsyncer")
        }
    }

    func run() async throws {
        let (contactsPath, serverPath) = try programs.paths()
        let server = try await ServerProcess.start(executable: serverPath)
        defer { server.stop() }
        let run = try ContactsCommands(contacts: contactsPath, server: server.baseURL, name: "dav-bench")
        defer { run.remove() }
        let file = run.directory.appendingPathComponent("cards.vcf")
        let total = try Self.prepareCards(cards, count: count, into: file)
        try run.signUp("laptop", others: ["dav"])
        _ = try run.command("laptop", ["import", file.path])
        _ = try run.command("dav", ["sync"])

        // The bridge, as a user starts it.
        let log = run.directory.appendingPathComponent("dav.log").path
        let bridge = try ChildProcess(
            [
                contactsPath, "--device", "dav", "--server", server.baseURL, "--data-dir",
                run.directory.appendingPathComponent("data").path, "dav", "--listen", "127.0.0.1:0",
            ],
            environment: ["CONTACTS_PASSWORD": "bench-password", "CONTACTS_PASSPHRASE": "bench passphrase"],
            output: .file(log))
        defer {
            kill(bridge.pid, SIGTERM)
            _ = bridge.wait()
        }
        guard
            let announced = try await announcement(
                #"http://127\.0\.0\.1:\d+/"#, inLog: log, of: bridge, what: "the bridge says where it listens"),
            let port = Int(announced.dropFirst("http://127.0.0.1:".count).dropLast())
        else {
            throw ValidationError(
                "the bridge stopped as it started: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        let shown = try run.command("dav", ["dav", "--show-credentials"]).output
        guard
            let password = shown.split(separator: "\n").first(where: { $0.hasPrefix("password:") })?
                .split(separator: " ").last.map(String.init)
        else { throw ValidationError("`contacts dav --show-credentials` printed no password: \(shown)") }
        let client = DAVClient(base: "http://127.0.0.1:\(port)", password: password)

        print("vdirsyncer against `contacts dav`, \(total) contacts, whole commands (median of \(runs)):")
        print("| step | time | contacts/s |")
        print("| --- | ---: | ---: |")
        var firsts: [Double] = []
        var noops: [Double] = []
        for index in 0..<runs {
            let vdir = try VdirsyncerRun(
                vdirsyncer: vdirsyncer, directory: run.directory.appendingPathComponent("vdir-\(index)"),
                url: client.base, password: password)
            try vdir.discover()
            firsts.append(try vdir.timedSync())
            guard try vdir.cardCount() == total else {
                throw ValidationError("vdirsyncer wrote \(try vdir.cardCount()) cards of \(total)")
            }
            noops.append(try vdir.timedSync())
        }
        let first = Self.median(firsts)
        let noop = Self.median(noops)
        print(
            "| first download into an empty vdir | \(ContactsCommands.format(first)) | \(Int(Double(total) / first)) |")
        print("| sync with nothing to do | \(ContactsCommands.format(noop)) | |")
        print(
            "| (vdirsyncer --version, its start alone) | \(ContactsCommands.format(try Self.versionTime(vdirsyncer))) | |"
        )

        // Edits by a DAV client, each until the other device's screen is told.
        let laptop = try ContactsDevice(
            .init(
                dataDirectory: run.directory.appendingPathComponent("data").path, deviceName: "screen",
                serverURL: URL(string: server.baseURL)!, automaticallySync: true))
        try await laptop.account.signIn(username: "bench", password: "bench-password", passphrase: "bench passphrase")
        try await laptop.sync()
        let ids = try laptop.reader.contacts().prefix(edits).map(\.id)
        var latencies: [Double] = []
        let changes = laptop.activity()
        var iterator = changes.makeAsyncIterator()
        for (index, id) in ids.enumerated() {
            let path = "/books/Contacts/\(id.uuidString).vcf"
            let (card, etag) = try await client.get(path)
            let note = "edit \(index) by a DAV client"
            let edited = card.replacingOccurrences(of: "END:VCARD", with: "NOTE:\(note)\r\nEND:VCARD")
            let start = ContinuousClock.now
            try await client.put(path, edited, etag: etag)
            while true {
                guard let activity = await iterator.next() else { throw ValidationError("the device's activity ended") }
                // A card with a note of its own has both, one line each.
                if case .contactsChanged = activity, try laptop.reader.contact(id)?.notes.contains(note) == true {
                    break
                }
            }
            latencies.append((ContinuousClock.now - start).inSeconds)
        }
        let sorted = latencies.sorted()
        print("")
        print(
            "A PUT by a DAV client until another device (automatic sync) has it and redraws, by push (\(edits) edits):")
        print("| p50 | p90 | max |")
        print("| ---: | ---: | ---: |")
        print(
            "| \(ContactsCommands.format(BenchSupport.percentile(sorted, 50))) | \(ContactsCommands.format(BenchSupport.percentile(sorted, 90))) | \(ContactsCommands.format(sorted.last ?? 0)) |"
        )
    }

    /// The cards to serve, in one file; how many.
    static func prepareCards(_ directory: String?, count: Int, into file: URL) throws -> Int {
        guard let directory else {
            try VCardGenerator.write(count: count, to: file)
            return count
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".vcf") }
            .sorted()
        guard !names.isEmpty else { throw ValidationError("no .vcf files in \(directory)") }
        var all = Data()
        for name in names { all += try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)) }
        try all.write(to: file)
        return names.count
    }

    static func median(_ values: [Double]) -> Double { BenchSupport.percentile(values.sorted(), 50) }

    static func versionTime(_ vdirsyncer: String) throws -> Double {
        let start = ContinuousClock.now
        _ = try ChildProcess([vdirsyncer, "--version"]).wait()
        return (ContinuousClock.now - start).inSeconds
    }
}

/// One vdir and its vdirsyncer configuration, paired with the bridge.
private struct VdirsyncerRun {
    let vdirsyncer: String
    let directory: URL
    let config: String

    init(vdirsyncer: String, directory: URL, url: String, password: String) throws {
        self.vdirsyncer = vdirsyncer
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        config = directory.appendingPathComponent("config").path
        try """
        [general]
        status_path = "\(directory.path)/status/"

        [pair contacts]
        a = "local"
        b = "bridge"
        collections = ["from b"]

        [storage local]
        type = "filesystem"
        path = "\(directory.path)/vdir/"
        fileext = ".vcf"

        [storage bridge]
        type = "carddav"
        url = "\(url)/"
        username = "contacts"
        password = "\(password)"
        """.write(toFile: config, atomically: true, encoding: .utf8)
    }

    func discover() throws {
        let outcome = try ChildProcess.runBlocking(
            [vdirsyncer, "-c", config, "discover"], input: String(repeating: "y\n", count: 8))
        guard outcome.status == 0 else {
            throw ValidationError("vdirsyncer discover failed: \(outcome.output) \(outcome.error)")
        }
    }

    func timedSync() throws -> Double {
        let start = ContinuousClock.now
        let outcome = try ChildProcess.runBlocking([vdirsyncer, "-c", config, "sync"])
        let seconds = (ContinuousClock.now - start).inSeconds
        guard outcome.status == 0 else {
            throw ValidationError("vdirsyncer sync failed: \(outcome.output) \(outcome.error)")
        }
        return seconds
    }

    func cardCount() throws -> Int {
        let folder = directory.appendingPathComponent("vdir/Contacts").path
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".vcf") }.count
    }
}

/// GET and PUT against the bridge, as a DAV client does, with the project's one HTTP client (AsyncHTTPClient:
/// Foundation's URLSession would pull libcurl into a build with the Swift runtime linked in).
private struct DAVClient {
    let base: String
    let password: String

    private func request(_ method: HTTPMethod, _ path: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        let token = Data("contacts:\(password)".utf8).base64EncodedString()
        request.headers.add(name: "Authorization", value: "Basic \(token)")
        return request
    }

    func get(_ path: String) async throws -> (card: String, etag: String) {
        let response = try await HTTPClient.shared.execute(request(.GET, path), timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 24)
        guard response.status == .ok, let etag = response.headers.first(name: "ETag") else {
            throw ValidationError("GET \(path) failed: \(response.status)")
        }
        return (String(buffer: body), etag)
    }

    func put(_ path: String, _ card: String, etag: String) async throws {
        var request = request(.PUT, path)
        request.headers.add(name: "Content-Type", value: "text/vcard; charset=utf-8")
        request.headers.add(name: "If-Match", value: etag)
        request.body = .bytes(ByteBuffer(string: card))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .noContent else {
            throw ValidationError("PUT \(path) failed: \(response.status) \(String(buffer: body))")
        }
    }
}
