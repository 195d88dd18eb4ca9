import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncCore
import SyncTesting
import Testing

/// The issue's report, through the real `contacts` program: a plain "Mallory Forged" contact written with the
/// account's token does not reach `contacts list`, and `contacts tampered` shows what arrived.
@Suite(
    "contacts tampered: the forged contact through the command line", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct TamperCommandTests {
    @Test("Mallory Forged is not listed; contacts tampered lists it (text and JSON); nothing is sent back")
    func malloryForged() async throws {
        try await TestServer.with { server in
            try await withTemporaryDirectory { directory in
                var program = ContactsProgram(dataDirectory: directory)
                program.environment["CONTACTS_PASSWORD"] = "correct horse battery"
                program.environment["CONTACTS_PASSPHRASE"] = "orbit maple quiet lantern"
                func run(_ arguments: [String]) async throws -> ContactsProgram.Outcome {
                    try await program.run(["--server", server.baseURL, "--device", "desk"] + arguments)
                }
                #expect(try await run(["account", "signup", "--username", "ada"]).status == 0)
                let added = try await run(["add", "--name", "Alice Real"])
                #expect(added.status == 0, "\(added.error)")
                let none = try await run(["tampered"])
                #expect(none.status == 0, "\(none.error)")
                #expect(none.output.hasPrefix("Nothing refused"), "\(none.output)")

                // With the account's token, as a compromised server would: a plain contact in the encrypted book.
                let client = try await TestClient(baseURL: server.baseURL).signedIn(username: "ada")
                let recordID = RecordValue.ID(recordName: UUID().uuidString, zoneID: Contact.zoneID)
                var forged = RecordValue(recordType: Contact.recordType, recordID: recordID)
                forged["name"] = .string("Mallory Forged")
                forged["emails"] = .string(#"[{"id":"e1","label":"work","value":"mallory@example.org"}]"#)
                let stored = try await client.modifyRecords(ModifyRecordsRequest(saves: [forged])).savedRecords
                #expect(stored.count == 1)

                let synced = try await run(["sync"])
                #expect(synced.status == 0, "\(synced.error)")
                let listed = try await run(["list"])
                #expect(listed.output.contains("Alice Real"), "\(listed.output)")
                #expect(!listed.output.contains("Mallory"), "\(listed.output)")

                let report = try await run(["tampered"])
                #expect(report.status == 0, "\(report.error)")
                #expect(report.output.contains("1 record refused as tampered"), "\(report.output)")
                #expect(report.output.contains("Contact \(recordID.recordName) in book Contacts"), "\(report.output)")
                #expect(report.output.contains("plainField"), "\(report.output)")
                let json = try await run(["tampered", "--json"])
                let entries = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]]
                let entry = try #require(entries?.first)
                #expect(entries?.count == 1)
                #expect(entry["recordName"] as? String == recordID.recordName)
                #expect(entry["reason"] as? String == "plainField")
                let record = try #require(entry["record"] as? [String: Any])
                let fields = try #require(record["fields"] as? [String: Any])
                #expect(fields["name"] != nil, "the record as it arrived: \(record)")
                let status = try await run(["status"])
                #expect(status.output.contains("refused:    1 record(s) refused as tampered"), "\(status.output)")

                // Nothing was sent back: the server still holds the forgery as it was stored.
                let now = try await client.lookupRecords([recordID]).records.first
                #expect(now?.recordChangeTag == stored.first?.recordChangeTag)
            }
        }
    }
}
