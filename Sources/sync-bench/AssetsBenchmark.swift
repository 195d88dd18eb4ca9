import ArgumentParser
import Foundation
import SyncCore
import SyncTesting

/// Measures assets as the contacts app uses them, through whole `contacts` commands against a release
/// `sync-server`: N contacts each with a photo imported and uploaded; another device's first sync beside
/// the same sync of N contacts without photos; one photo on demand; then one large photo up and down,
/// with the server's peak memory growth during each, beside a plain `curl` moving the same bytes
/// through the same routes (the reference: no encryption, no app).
struct AssetsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assets",
        abstract: "Assets: contacts with photos, a photo on demand, one large asset up and down beside curl.")

    @Option(help: "How many contacts, each with a photo.") var count = 1_000
    @Option(help: "Bytes of each contact's photo.") var photoBytes = 100_000
    @Option(help: "Bytes of the large photo moved up and down.") var largeBytes = 50_000_000
    @OptionGroup var programs: ProgramOptions

    func validate() throws {
        guard count > 0, photoBytes > 4, largeBytes > 4 else {
            throw ValidationError("--count, --photo-bytes and --large-bytes must be positive (photos above 4 bytes)")
        }
    }

    func run() async throws {
        let (contactsPath, serverPath) = try programs.paths()
        print("| step | time | rate | command's peak RSS | server's peak growth |")
        print("| --- | ---: | ---: | ---: | ---: |")

        // The control: the same contacts without photos.
        let control = try await ServerProcess.start(executable: serverPath)
        defer { control.stop() }
        let plain = try ContactsCommands(contacts: contactsPath, server: control.baseURL, name: "assets-control")
        defer { plain.remove() }
        try VCardGenerator.write(count: count, to: plain.directory.appendingPathComponent("cards.vcf"))
        try plain.signUp(others: Self.firstSyncDevices)
        _ = try plain.command("A", ["import", plain.directory.appendingPathComponent("cards.vcf").path, "--no-sync"])
        _ = try plain.command("A", ["sync"])
        let controlDownload = try Self.medianFirstSync(
            plain, "first sync of a device, no photos at all (median of 5 devices)")
        row(controlDownload, rate: "\(Int(Double(count) / controlDownload.seconds)) contacts/s")

        let server = try await ServerProcess.start(executable: serverPath)
        defer { server.stop() }
        let run = try ContactsCommands(contacts: contactsPath, server: server.baseURL, name: "assets-bench")
        defer { run.remove() }
        let cards = run.directory.appendingPathComponent("cards.vcf")
        try VCardGenerator.write(count: count, to: cards, photoBytes: photoBytes)
        try run.signUp(others: Self.firstSyncDevices)
        let imported = try run.timed(
            "import on A, \(count) contacts with photos (--no-sync)", "A", ["import", cards.path, "--no-sync"])
        row(imported, rate: "\(Int(Double(count) / imported.seconds)) contacts/s")
        let uploaded = try run.timed("sync A (upload, photos included)", "A", ["sync"])
        row(uploaded, rate: Self.megabytesPerSecond(count * photoBytes, uploaded.seconds))
        print("| import and upload, total | \(ContactsCommands.format(imported.seconds + uploaded.seconds)) | | | |")
        let download = try Self.medianFirstSync(
            run, "first sync of a device, photos left on the server (median of 5 devices)")
        row(
            download,
            rate: String(format: "%.2f× the sync without photos", download.seconds / controlDownload.seconds))

        // One photo on demand, five different contacts: the median.
        let ids = try run.command("B", ["list"], outputLimit: 4096).output.split(separator: "\n").prefix(5).compactMap {
            $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
        }
        let out = run.directory.appendingPathComponent("photo.jpg").path
        let onDemand = try ids.map {
            try run.timed("photo ID --output on B (download one, median of 5)", "B", ["photo", $0, "--output", out])
        }
        row(ContactsCommands.median(onDemand), rate: "")
        let all = try run.timed("sync B --photos (every other photo)", "B", ["sync", "--photos"])
        row(all, rate: Self.megabytesPerSecond((count - ids.count) * photoBytes, all.seconds))

        // One large photo up and down, and curl with the same bytes through the same routes.
        let large = run.directory.appendingPathComponent("large.jpg")
        try Self.writeImage(largeBytes, to: large)
        let id = ids[0]
        _ = try run.command("A", ["photo", id, "--set", large.path, "--no-sync"])
        let watch = ServerMemory(pid: server.pid)
        watch.resetPeak()
        let up = try run.timed("sync A (one \(largeBytes / 1_000_000) MB photo up)", "A", ["sync"])
        row(up, rate: Self.megabytesPerSecond(largeBytes, up.seconds), server: watch.growthMiB())
        _ = try run.command("B", ["sync"])
        let downloaded = run.directory.appendingPathComponent("large-on-B.jpg").path
        watch.resetPeak()
        let down = try run.timed(
            "photo ID --output on B (the large photo down)", "B", ["photo", id, "--output", downloaded])
        row(down, rate: Self.megabytesPerSecond(largeBytes, down.seconds), server: watch.growthMiB())
        guard FileManager.default.contentsEqual(atPath: large.path, andPath: downloaded) else {
            throw ValidationError("the large photo B downloaded is not the one A set")
        }
        try await curlReference(server: server, watch: watch, large: large, in: run.directory)
        print("")
        print("server peak RSS over the whole run: \(BenchSupport.peakResidentKiB(of: "\(server.pid)") / 1024) MB")
    }

    /// The same bytes up and down through the same routes with curl: one process, its requests on one
    /// connection, no encryption and no app.
    private func curlReference(server: ServerProcess, watch: ServerMemory, large: URL, in directory: URL) async throws {
        let client = try await TestClient(baseURL: server.baseURL).signedUp(username: "curl-reference")
        try await client.saveZones("Reference")
        let upload = try await client.createUpload(size: Int64(largeBytes))
        let chunk = 1 << 20
        var config = ""
        let input = try FileHandle(forReadingFrom: large)
        defer { try? input.close() }
        var first = 0
        while first < largeBytes {
            let bytes = try input.read(upToCount: chunk) ?? Data()
            let file = directory.appendingPathComponent("chunk-\(first)")
            try bytes.write(to: file)
            if !config.isEmpty { config += "next\n" }
            config += """
                url = "\(server.baseURL)/v1/assets/uploads/\(upload.uploadID)"
                request = "PUT"
                header = "Authorization: Bearer \(client.token!)"
                header = "Content-Type: application/octet-stream"
                header = "Content-Range: \(ByteRange(Int64(first)..<Int64(first + bytes.count)).contentRange(total: Int64(largeBytes)))"
                data-binary = "@\(file.path)"
                output = "/dev/null"

                """
            first += bytes.count
        }
        let configFile = directory.appendingPathComponent("curl-upload.conf")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        watch.resetPeak()
        let up = try Self.curl(["--fail", "--silent", "--show-error", "--config", configFile.path])
        row(
            ContactsCommands.Step(
                name: "curl, the same bytes up (reference)", seconds: up.seconds, peakKiB: up.peakKiB),
            rate: Self.megabytesPerSecond(largeBytes, up.seconds), server: watch.growthMiB())
        guard try await client.uploadStatus(upload.uploadID).isComplete else {
            throw ValidationError("curl's upload did not complete")
        }
        var record = RecordValue(
            recordType: "Reference",
            recordID: RecordValue.ID(recordName: "large", zoneID: RecordZone.ID(zoneName: "Reference")))
        record["asset"] = .asset(AssetReference(assetID: upload.uploadID, size: Int64(largeBytes)))
        _ = try await client.modifyRecords(ModifyRecordsRequest(saves: [record]))
        let path = AssetDownload.path(assetID: upload.uploadID, recordID: record.recordID, scope: .private)
        watch.resetPeak()
        let down = try Self.curl([
            "--fail", "--silent", "--show-error", "-H", "Authorization: Bearer \(client.token!)", "-o", "/dev/null",
            server.baseURL + path,
        ])
        row(
            ContactsCommands.Step(
                name: "curl, the same bytes down (reference)", seconds: down.seconds, peakKiB: down.peakKiB),
            rate: Self.megabytesPerSecond(largeBytes, down.seconds), server: watch.growthMiB())
    }

    /// Devices whose first sync is timed, the median kept (one is "B", which the later steps use).
    static let firstSyncDevices = ["B", "B2", "B3", "B4", "B5"]

    private static func medianFirstSync(_ commands: ContactsCommands, _ name: String) throws -> ContactsCommands.Step {
        let steps = try firstSyncDevices.map { try commands.timed(name, $0, ["sync"]) }
        return ContactsCommands.median(steps)
    }

    /// A file of `count` random bytes after a JPEG header, written a MiB at a time (held whole, 50 MB in
    /// this process would count to the peak of every command it starts after).
    private static func writeImage(_ count: Int, to file: URL) throws {
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var random = SplitMix64(seed: UInt64(count))
        var written = 0
        while written < count {
            let piece = min(1 << 20, count - written)
            try handle.write(contentsOf: VCardGenerator.image(piece, &random))
            written += piece
        }
    }

    private static func curl(_ arguments: [String]) throws -> (seconds: Double, peakKiB: Int) {
        let start = ContinuousClock.now
        let ended = try ChildProcess(["/usr/bin/curl"] + arguments).wait()
        guard ended.status == 0 else { throw ValidationError("curl \(arguments.prefix(4)) failed: \(ended.status)") }
        return ((ContinuousClock.now - start).inSeconds, ended.peakResidentKiB)
    }

    private func row(_ step: ContactsCommands.Step, rate: String, server: Int? = nil) {
        print(
            "| \(step.name) | \(ContactsCommands.format(step.seconds)) | \(rate) | \(step.peakKiB / 1024) MB | \(server.map { "\($0) MB" } ?? "") |"
        )
    }

    private static func megabytesPerSecond(_ bytes: Int, _ seconds: Double) -> String {
        String(format: "%.1f MB/s", Double(bytes) / 1e6 / seconds)
    }
}

/// A server process's resident memory: its peak reset before a step, and how far the peak rose above
/// where the step began.
private final class ServerMemory {
    let process: String
    private var start = 0

    init(pid: pid_t) { process = String(pid) }

    /// Resets the peak (VmHWM) to the current resident size, and remembers that size.
    func resetPeak() {
        BenchSupport.resetPeakResident(of: process)
        start = BenchSupport.residentKiB(of: process)
    }

    /// How many MiB the peak rose above the resident size at the last reset.
    func growthMiB() -> Int {
        max(0, BenchSupport.peakResidentKiB(of: process) - start) / 1024
    }
}
