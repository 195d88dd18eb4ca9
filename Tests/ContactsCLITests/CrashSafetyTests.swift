import ContactsTesting
import Foundation
import SyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `contacts sync` killed with SIGKILL in the middle of an upload, while the server still holds one
/// of its batches: the batch is applied after the process died, so its answer reaches no one. The
/// next sync finishes the upload; the server ends with every contact, each written once, exactly
/// as after an upload that was never interrupted.
@Suite(
    "contacts: a sync killed mid-upload loses nothing and writes nothing twice", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct CrashSafetyTests {
    /// More than four batches of 400: with at most two batches in flight, and those after the first
    /// two held at the second gate, at most four can reach the server before the kill, whatever the timing.
    private static let count = 2_000

    /// `count` cards with names and an email each.
    private static func cards() -> String {
        (1...count).map { index in
            let name = String(format: "Person %04d", index)
            return "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:\(name)\r\nEMAIL:person\(index)@example.org\r\nEND:VCARD\r\n"
        }.joined()
    }

    /// The options naming a device of account "ada" on `server`, signed up or in.
    private func device(_ name: String, on server: TestServer, directory: String, signUp: Bool) async throws
        -> [String]
    {
        let options = ["--server", server.baseURL, "--data-dir", directory, "--device", name]
        let secrets = [
            "CONTACTS_PASSWORD": "correct horse battery", "CONTACTS_PASSPHRASE": "orbit maple quiet lantern",
        ]
        let account = try await ChildProcess.run(
            [ContactsProgram.path, "account", signUp ? "signup" : "signin", "--username", "ada"] + options,
            environment: secrets)
        try #require(account.status == 0, "\(account.error)")
        return options
    }

    /// The owner's change count: how many writes the server made for the account.
    private func changeCount(_ server: TestServer) async throws -> Int {
        Int(try await server.storedStrings("CAST(change_seq AS TEXT)", in: "account").first ?? "") ?? -1
    }

    private func contactRecords(_ server: TestServer) async throws -> Int {
        try await server.storedStrings("record_name", in: "record WHERE record_type = 'Contact' AND deleted = 0")
            .count
    }

    private func contacts(_ arguments: [String]) async throws -> ChildProcess.Outcome {
        let outcome = try await ChildProcess.run([ContactsProgram.path] + arguments)
        #expect(outcome.status == 0, "contacts \(arguments.prefix(2).joined(separator: " ")): \(outcome.error)")
        return outcome
    }

    @Test("killed while a batch is held at the server, then synced again: every contact once, each written once")
    func killedMidUpload() async throws {
        try await withTemporaryDirectory { directory in
            let file = directory + "/cards.vcf"
            try Self.cards().write(toFile: file, atomically: true, encoding: .utf8)

            // An upload nothing interrupts, for the count of writes it takes.
            var expectedWrites = 0
            try await TestServer.with { control in
                let calm = try await device("calm", on: control, directory: directory + "/control", signUp: true)
                _ = try await contacts(["import", file, "--no-sync"] + calm)
                _ = try await contacts(["sync"] + calm)
                expectedWrites = try await changeCount(control)
                #expect(try await contactRecords(control) == Self.count)
            }

            try await TestServer.with { server in
                let a = try await device("a", on: server, directory: directory + "/crash", signUp: true)
                _ = try await contacts(["import", file, "--no-sync"] + a)

                // The first batch waits at one gate; once it is let through, the next waits at another.
                let modify = "/v1/databases/private/records/modify"
                let first = server.faults.closeGate(pathPrefix: modify)
                let sync = try ChildProcess([ContactsProgram.path, "sync"] + a)
                try await first.waitUntilHeld(timeout: .seconds(120))
                let second = server.faults.closeGate(pathPrefix: modify)
                first.open()
                try await second.waitUntilHeld(timeout: .seconds(120))
                sync.terminate(SIGKILL)
                _ = sync.wait()
                // The held batch is applied now; its answer is lost with the process.
                let held = try await contactRecords(server)
                second.open()
                try await waitUntil("the held batch is written", timeout: .seconds(120)) {
                    try await contactRecords(server) > held
                } observed: {
                    "\((try? await contactRecords(server)) ?? -1) contacts on the server; \(held) before the batch"
                }
                let before = try await contactRecords(server)
                #expect(before < Self.count, "the sync was killed before it sent everything (\(before) on the server)")

                let again = try await contacts(["sync"] + a)
                #expect(
                    again.output.contains("\(Self.count) contacts") && again.output.contains(", 0 pending"),
                    "\(again.output)")
                #expect(try await contactRecords(server) == Self.count)
                #expect(
                    try await changeCount(server) == expectedWrites, "every contact written once, as without the crash")
                let conflicts = try await contacts(["conflicts"] + a)
                #expect(conflicts.output.hasPrefix("No conflicts"), "a lost answer is no conflict: \(conflicts.output)")

                // Another device gets each contact once.
                let b = try await device("b", on: server, directory: directory + "/crash", signUp: false)
                _ = try await contacts(["sync"] + b)
                let listed = try await contacts(["list", "--json"] + b)
                let rows = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [Any]
                #expect(rows?.count == Self.count)
            }
        }
    }
}
