import Foundation
import LocalSystem
import SyncTesting
import TestTraits
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `contacts dav` beside the full-screen app on one machine: a card a DAV client writes appears on the
/// app's screen by push, and a contact typed in the app reaches the bridge's clients.
@Suite(
    "End to end: the CardDAV bridge beside the app", .serialized, .aheadOfTheCrowd,
    .enabled(if: EndToEnd.unavailableReason == nil, Comment(rawValue: EndToEnd.unavailableReason ?? "")),
    .timeLimit(.minutes(10)))
struct CardDAVEndToEndTests {
    @Test(
        "the app and contacts dav run at once; a client's PUT shows on the app's screen, the app's edit in the client's listing"
    )
    func bridgeBesideTheApp() async throws {
        let world = try await EndToEnd(devices: [("a", "ada"), ("dav", "ada")])
        defer { world.close() }
        try world.launch(["a"])
        let a = world.session("a")
        try await world.waitFor(a, "Push      connected")

        // The bridge, on its own device ('dav', as `contacts dav` picks when no --device is given).
        let log = world.directory.appendingPathComponent("dav.log").path
        let bridge = try ChildProcess(
            [
                world.contacts, "dav", "--server", world.serverURL, "--data-dir", world.directory.path,
                "--sync-when-busy", "--listen", "127.0.0.1:0",
            ], output: .file(log))
        defer {
            kill(bridge.pid, SIGTERM)
            _ = bridge.wait()
        }
        let base = try #require(
            try await announcement(
                #"http://127\.0\.0\.1:\d+/"#, inLog: log, of: bridge, what: "the bridge says where it listens"),
            "the bridge stopped as it started")
        #expect(try String(contentsOfFile: log, encoding: .utf8).contains("device 'dav'"))
        let shown = try await world.cli("dav", ["dav", "--show-credentials"])
        let password = try #require(
            shown.split(separator: "\n").first { $0.hasPrefix("password:") }?.split(separator: " ").last)
        let curl = "/usr/bin/curl"
        try #require(FileManager.default.isExecutableFile(atPath: curl), "curl is not installed (apt install curl)")

        // A DAV client writes a card: the app shows it, nobody touching it.
        let card =
            "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:grace@example.org\r\nFN:Grace Hopper\r\nEMAIL;TYPE=work:grace@navy.example\r\nEND:VCARD\r\n"
        let put = try await ChildProcess.run([
            curl, "-s", "-o", "/dev/null", "-w", "%{http_code}", "-u", "contacts:\(password)", "-X", "PUT", "-H",
            "Content-Type: text/vcard", "--data-binary", card, base + "books/Contacts/grace.vcf",
        ])
        #expect(put.output == "201", "\(put.output) \(put.error)")
        try await world.waitFor(a, "Grace Hopper")

        // The app adds one: the bridge's listing has it.
        try a.send("a")
        try a.send("Ada Lovelace", literal: true)
        try a.send("Enter")
        try await world.waitFor(a, "Saved Ada Lovelace")
        try a.send("b")
        try await world.waitFor(a, "Backed up.")
        try await waitUntil("the bridge's clients see the app's new contact") {
            let listing = try await ChildProcess.run([
                curl, "-s", "-u", "contacts:\(password)", "-X", "PROPFIND", "-H", "Depth: 1", "--data",
                "<d:propfind xmlns:d=\"DAV:\" xmlns:card=\"urn:ietf:params:xml:ns:carddav\"><d:prop><card:address-data/></d:prop></d:propfind>",
                base + "books/Contacts/",
            ])
            return listing.output.contains("FN:Ada Lovelace") && listing.output.contains("FN:Grace Hopper")
        }
    }
}
