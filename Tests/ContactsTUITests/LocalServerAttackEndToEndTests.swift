import ContactsTesting
import Foundation
import SyncTesting
import TestTraits
import Testing

@testable import ContactsLocal
@testable import ContactsModel
@testable import ContactsStore

#if canImport(Glibc)
    import Glibc
#endif

/// The attack of the report, on the full-screen app: the local server stopped, another user listening on the
/// port an older version saved, and a socket planted in a server directory opened to others. The app opens
/// (it works offline), sends nothing to either, and its status pane says why.
@Suite(
    "End to end: the full-screen app sends nothing to a squatter", .serialized, .aheadOfTheCrowd,
    .enabled(if: EndToEnd.unavailableReason == nil, Comment(rawValue: EndToEnd.unavailableReason ?? "")),
    .timeLimit(.minutes(10)))
struct LocalServerAttackEndToEndTests {
    @Test("the old port taken and a socket planted in a directory others can enter: nothing sent, the reason shown")
    func squatters() async throws {
        let contacts = try #require(EndToEnd.contacts)
        // Short, so that the whole message fits the status pane.
        let directory = "/tmp/ta-" + String(UUID().uuidString.prefix(8))
        let data = directory + "/data"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let local = LocalServer.ofContacts(dataDirectory: data, program: contacts)
        let added = try await ChildProcess.run([contacts, "--data-dir", data, "add", "--name", "Ada Lovelace"])
        try #require(added.status == 0, "\(added.error)")
        let stopped = try await ChildProcess.run([contacts, "--data-dir", data, "server", "stop"])
        try #require(stopped.status == 0, "\(stopped.error)")

        let tcp = try TCPSquatter(port: 0)
        try "\(tcp.port)\n4242\n".write(toFile: local.serverDirectory + "/address", atomically: true, encoding: .utf8)
        chmod(local.serverDirectory, 0o777)
        let unix = try UnixSquatter(path: local.socketPath)

        let app = try TmuxSession(
            columns: 200, rows: 40, command: "'\(contacts)' '--data-dir' '\(data)'")
        defer { app.close() }
        let shown = try await app.wait(timeout: 150) {
            let screen = try app.capture()
            return screen.contains("Ada Lovelace") && screen.contains("error") && screen.contains("777")
        }
        let screen = (try? app.capture()) ?? ""
        #expect(shown, "the app opened with its contacts and said what is wrong: \(screen)")
        // Asked to back up now: the request is refused before it connects, and the pane says so.
        try app.send("b")
        let refused = try await app.wait(timeout: 60) { try app.capture().contains("refusing to talk to the server") }
        let after = (try? app.capture()) ?? ""
        #expect(refused, "the back up was refused before connecting: \(after)")
        #expect(tcp.connectionsWaiting() == 0, "nothing connected to the old port")
        #expect(unix.connectionsWaiting() == 0, "nothing connected to the planted socket")
        #expect(local.running() == nil, "no server was started in a directory others can enter")
    }
}
