import Foundation
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// `sync-server admin accounts move`, the built program, against a running server whose accounts are
/// spread over two PostgreSQL clusters (the main database and one more), and the options that name them.
@Suite("sync-server admin accounts move, over clusters")
struct ClusterAdminTests {
    @Test(
        "move takes an account to the other cluster while it stays signed in; a cluster, an account or clusters that do not exist are refused by name, changing nothing"
    )
    func move() async throws {
        try await TestServer.$backend.withValue(.postgres) {
            try await TestServer.$clusters.withValue(["second"]) {
                try await withServer { server, anonymous in
                    let store = try #require(server.store as? ClusteredRecordStore)
                    let ada = try await anonymous.signedUp(username: "ada")
                    _ = try await anonymous.signedUp(username: "grace")
                    try await ada.saveZones("Contacts")
                    var mum = RecordValue(recordType: "Note", recordID: .init(recordName: "r1", zoneID: contactsZone))
                    mum["name"] = .string("Mum")
                    try await ada.save([mum])
                    #expect(try await store.cluster(ofUsername: "ada") == "main")
                    #expect(try await store.cluster(ofUsername: "grace") == "second")
                    let clusters = [
                        "--database", try server.databaseURL(), "--cluster",
                        "second=\(try server.databaseURL(cluster: "second"))",
                    ]

                    for (arguments, message) in [
                        (
                            ["ada", "--to", "nowhere"] + clusters,
                            "there is no cluster 'nowhere'; the clusters are: main, second"
                        ),
                        (["nobody", "--to", "second"] + clusters, "there is no account named 'nobody'"),
                        (["grace", "--to", "second"] + clusters, "'grace' is on cluster 'second' already"),
                        (
                            ["ada", "--to", "second", "--database", try server.databaseURL()],
                            "the server has one database, so there is nowhere to move an account to"
                        ),
                        (["ada", "--to", "second", "--cluster", "x"] + clusters, "--cluster takes NAME=URL"),
                    ] {
                        let refused = try await ServerCommandTests.run(["admin", "accounts", "move"] + arguments)
                        #expect(refused.status != 0 && refused.output.contains(message), "\(refused.output)")
                    }
                    #expect(try await store.cluster(ofUsername: "ada") == "main", "a refused move changes nothing")

                    let moved = try await ServerCommandTests.run(
                        ["admin", "accounts", "move", "ada", "--to", "second"] + clusters)
                    #expect(moved.status == 0, "\(moved.output)")
                    #expect(moved.output.contains("moved ada from main to second"), "\(moved.output)")
                    #expect(try await store.cluster(ofUsername: "ada") == "second")
                    // The same session, on the new cluster: its record, and a write.
                    let changes = try await ada.fetchAllZoneChanges(contactsZone)
                    #expect(changes.modifications.map { $0["name"] } == [.string("Mum")])
                    var dad = RecordValue(recordType: "Note", recordID: .init(recordName: "r2", zoneID: contactsZone))
                    dad["name"] = .string("Dad")
                    try await ada.save([dad])
                    // The server's configuration file names the clusters, one `cluster` line each.
                    let config = TemporaryFiles.path("clusters", extension: "conf")
                    defer { try? FileManager.default.removeItem(atPath: config) }
                    try """
                    database = \(try server.databaseURL())
                    cluster = second=\(try server.databaseURL(cluster: "second"))
                    """.write(toFile: config, atomically: true, encoding: .utf8)
                    let listed = try await ServerCommandTests.run(["admin", "accounts", "list", "--config", config])
                    #expect(listed.status == 0, "\(listed.output)")
                    let rows = listed.output.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
                    #expect(rows.first?.last == "CLUSTER", "\(listed.output)")
                    #expect(
                        rows.dropFirst().map { [$0.first ?? "", $0.last ?? ""] } == [
                            ["ada", "second"], ["grace", "second"],
                        ],
                        "each account once, with its cluster: \(listed.output)")
                    // One database named twice would list its accounts twice, and place accounts on it twice.
                    let twice = try await ServerCommandTests.run(
                        ["admin", "accounts", "list"] + clusters + [
                            "--cluster", "third=\(try server.databaseURL(cluster: "second"))",
                        ])
                    #expect(
                        twice.status != 0 && twice.output.contains("clusters 'second' and 'third' are one database"),
                        "\(twice.output)")
                    let counts = try await store.rowCounts(
                        of: try #require(try await store.account(username: "ada")).userRecordName)
                    #expect(counts["main"] == 0 && counts["second", default: 0] > 0, "\(counts)")
                }
            }
        }
    }

    @Test(
        "a server of one database started again with a second cluster keeps its accounts where they are, signed in; new accounts go to the cluster with fewer"
    )
    func oneDatabaseGainsACluster() async throws {
        try await TestServer.$backend.withValue(.postgres) {
            let path = TemporaryFiles.path("gains-a-cluster", extension: "sqlite")
            let before = try await TestServer.start(storagePath: path)
            let ada: TestClient
            do {
                ada = try await TestClient(baseURL: before.baseURL).signedUp(username: "ada")
                try await ada.saveZones("Contacts")
                try await before.stop()
            } catch {
                try? await before.stop()
                throw error
            }
            let after = try await TestServer.$clusters.withValue(["second"]) {
                try await TestServer.start(storagePath: path)
            }
            do {
                let store = try #require(after.store as? ClusteredRecordStore)
                #expect(try await store.cluster(ofUsername: "ada") == "main", "placed where it was")
                var again = ada
                again.baseURL = after.baseURL
                #expect(try await again.listZones().map(\.zoneID.zoneName) == ["Contacts"], "the same session")
                _ = try await TestClient(baseURL: after.baseURL).signedUp(username: "grace")
                #expect(try await store.cluster(ofUsername: "grace") == "second")
                let taken = await syncError {
                    _ = try await TestClient(baseURL: after.baseURL).signedUp(username: "ADA")
                }
                #expect(taken?.code == .constraintViolation, "a username is one account over every cluster")
            } catch {
                try? await after.stop()
                throw error
            }
            try await after.stop()
            for database in [TestPostgres.databaseName(for: path), TestPostgres.databaseName(for: path) + "_second"] {
                try await TestPostgres.dropDatabase(database)
            }
        }
    }

    @Test("the server refuses clusters without --database, the name main, and a placement that names no cluster")
    func options() async throws {
        for (arguments, message) in [
            (["--cluster", "eu=postgres://u@h/d"], "--cluster needs --database"),
            (
                ["--database", "postgres://u@h/d", "--cluster", "main=postgres://u@h/e"],
                "the cluster 'main' is --database's"
            ),
            (["--database", "postgres://u@h/d", "--placement", "eu"], "--placement chooses among clusters"),
            (
                ["--database", "postgres://u@h/d", "--cluster", "eu=postgres://u@h/e", "--placement", "us"],
                "--placement must be 'fewest' or a cluster's name (main, eu); 'us' is neither"
            ),
        ] {
            let (status, output) = try await ServerCommandTests.run(arguments)
            #expect(status != 0 && output.contains(message), "\(output)")
        }
    }
}
