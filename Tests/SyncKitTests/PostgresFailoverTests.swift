import Foundation
import SyncTesting
import TestTraits
import Testing

/// The primary of a PostgreSQL cluster lost under two instances, 8 writing clients and two engines
/// (``DatabaseOutage``), on a pg_auto_failover cluster of the test's own (`Scripts/with-postgres-ha`):
/// a primary and a synchronous standby. The instances are given both nodes, as libpq spells them.
@Suite("PostgreSQL failover under load", .aheadOfTheCrowd, .serialized)
struct PostgresFailoverTests {
    @Test(
        "the primary killed -9 with its keeper (a machine lost) while 8 clients write over 2 instances: requests fail with retryAfter, the instances move to the promoted standby, no acknowledged write is lost, the engines converge, push flows again"
    )
    func unplannedFailover() async throws {
        let cluster = try await FailoverCluster.start()
        defer { cluster.remove() }
        try await DatabaseOutage.run(
            .init(
                kind: .failover, url: cluster.url, lose: { try await cluster.control("kill-primary") },
                recover: { try await cluster.control("wait-writable") }))
        // The lost node comes back as the standby of the new primary.
        try await cluster.control("rejoin")
        try await cluster.control("wait-healthy")
    }

    @Test(
        "a planned switchover while 8 clients write over 2 instances: the instances move to the new primary, no acknowledged write is lost, the engines converge, push flows again"
    )
    func plannedSwitchover() async throws {
        let cluster = try await FailoverCluster.start()
        defer { cluster.remove() }
        let before = try await cluster.control("primary")
        try await DatabaseOutage.run(
            .init(
                kind: .switchover, url: cluster.url, lose: { try await cluster.control("switchover") },
                recover: { try await cluster.control("wait-healthy") }))
        #expect(try await cluster.control("primary") != before, "the other node takes writes after the switchover")
    }
}
