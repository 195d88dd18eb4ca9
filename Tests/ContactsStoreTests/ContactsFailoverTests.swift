import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import PostgresNIO
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// The contacts app through a PostgreSQL failover: a pg_auto_failover cluster of the test's own (a
/// primary and a synchronous standby, `Scripts/with-postgres-ha`), two instances given both nodes.
@Suite("Contacts: a PostgreSQL failover during a large upload", .aheadOfTheCrowd, .serialized)
struct ContactsFailoverTests {
    static let count = 20_000

    @Test(
        "the primary killed -9 during a 20,000-contact upload through two instances: the laptop finishes with a sync of its own, the phone gets all 20,000 once each, nothing pending, and push reaches the phone after the promotion"
    )
    func failoverDuringUpload() async throws {
        let cluster = try await FailoverCluster.start()
        defer { cluster.remove() }
        let path = "contacts-failover-\(UUID())"
        let (one, two) = try await TestPostgres.$override.withValue(cluster.url) {
            try await TestServer.$backend.withValue(.postgres) {
                (
                    try await TestServer.start(storagePath: path, transport: .loopback),
                    try await TestServer.start(storagePath: path, transport: .loopback)
                )
            }
        }
        do {
            try await withTemporaryDirectory { directory in
                let laptop = try openDevice("laptop", directory: directory, server: one)
                try await laptop.account.signUp(
                    username: "ada", password: "correct horse battery", passphrase: testPassphrase)
                let phone = try ContactsDevice(
                    .init(
                        dataDirectory: directory, deviceName: "phone", serverURL: URL(string: two.baseURL)!,
                        automaticallySync: true, keyDerivation: cheapKeyDerivation, holdsWorkUnderLoad: false))
                try await phone.account.signIn(
                    username: "ada", password: "correct horse battery", passphrase: testPassphrase)
                var cards = ""
                for index in 0..<Self.count {
                    cards +=
                        "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Person \(index)\r\nEMAIL:p\(index)@example.org\r\nEND:VCARD\r\n"
                }
                let report = try laptop.interchange.importVCards(cards)
                #expect(report.imported == Self.count)

                // The upload runs; once part of it is acknowledged, the primary's machine is lost.
                let upload = Task { try await laptop.sync() }
                let stores = one.postgresStores
                @Sendable func stored() async throws -> Int64 {
                    var count: Int64 = 0
                    for store in stores {
                        count += try await store.withConnection { connection in
                            try await connection.query("SELECT COUNT(*) FROM record", logger: store.logger).collect()
                                .first?.decode(Int64.self) ?? 0
                        }
                    }
                    return count
                }
                try await waitUntil(
                    "part of the upload is stored", timeout: .seconds(600), poll: .milliseconds(100)
                ) {
                    try await stored() >= 2_000
                } observed: {
                    "records stored: \(String(describing: try? await stored()))"
                }
                try await cluster.control("kill-primary")
                try await cluster.control("wait-writable")
                // The sync under way retries by itself; if its retries ran out first, the next sync finishes.
                let first = await upload.result
                try await laptop.sync()
                #expect(try laptop.store.pendingCount() == 0, "the laptop has sent everything (first sync: \(first))")

                try await phone.sync()
                let names = try phone.store.contacts().map(\.name)
                #expect(names.count == Self.count, "no contact twice, none missing")
                #expect(Set(names) == Set((0..<Self.count).map { "Person \($0)" }))
                #expect(try phone.store.pendingCount() == 0)

                // Push flows again: the phone, on the other instance, fetches the laptop's edit by itself.
                try laptop.edit("Person 7") { $0.notes = "after the failover" }
                try await laptop.sync()
                try await waitUntil("the phone hears of the edit by push and fetches it") {
                    (try? phone.contact(named: "Person 7").notes) == "after the failover"
                } observed: {
                    "the phone's Person 7: \(String(describing: try? phone.contact(named: "Person 7").notes))"
                }
            }
        } catch {
            try? await one.stop()
            try? await two.stop()
            throw error
        }
        try await one.stop()
        try await two.stop()
    }
}
