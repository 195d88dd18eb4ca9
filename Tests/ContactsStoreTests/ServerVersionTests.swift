import ContactsStore
import ContactsTesting
import Foundation
import SyncClient
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// A client on a server older than it needs says so, once, clearly; on a new enough server it says nothing.
@Suite("The server's version")
struct ServerVersionTests {
    static func server(reporting version: ReleaseVersion) -> SyncServerConfiguration {
        var configuration = SyncServerConfiguration.testing
        configuration.version = version
        return configuration
    }

    @Test("GET /v1/health reports this release's version")
    func healthReportsTheRelease() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            let health = try await AccountClient(serverURL: URL(string: server.baseURL)!).health()
            #expect(health.version == "\(SyncRelease.version)")
            #expect(health.status == "ok")
        }
    }

    @Test("a device syncing with an older server warns once, naming the server, its version and what needs a newer one")
    func olderServerWarnsOnce() async throws {
        try await withContactsDevices(1, configuration: Self.server(reporting: ReleaseVersion(0, 2, 0))) {
            server, _, devices in
            let device = devices[0]
            try await device.sync()
            let warning = try #require(device.status.serverWarning, "an older server is said")
            #expect(warning.contains("the server at \(server.baseURL) runs sync-server 0.2.0"), "\(warning)")
            #expect(warning.contains("need sync-server \(ContactsDevice.serverRequirement.minimumVersion) or newer"))
            #expect(warning.contains("contact photos"), "\(warning)")

            try await device.sync()
            #expect(device.status.serverWarning == warning)
            #expect(server.faults.requestCount("GET /v1/health") == 1, "asked (and said) once, not at every sync")
        }
    }

    @Test(
        "a device that syncs by itself asks when it opens; a sync run before that answer came waits for it and ends with the warning"
    )
    func syncWaitsForTheCheckTheDeviceBegan() async throws {
        try await Self.expectTheSyncWaitsForTheHeldCheck { server, directory in
            try openDevice("laptop", directory: directory, server: server, automaticallySync: true)
        }
    }

    @Test(
        "a check begun before the device opened, as `contacts` begins it, is the one the device's sync waits for: the server is asked once"
    )
    func syncUsesTheCheckBegunBeforeTheDeviceOpened() async throws {
        try await Self.expectTheSyncWaitsForTheHeldCheck { server, directory in
            let begun = ContactsDevice.beginServerVersionCheck(serverURL: URL(string: server.baseURL)!)
            return try openDevice("laptop", directory: directory, server: server, serverVersionCheck: begun)
        }
    }

    /// Holds the answer to `GET /v1/health` of a server reporting 0.2.0 while `open` opens a device whose
    /// version check is then under way (begun by the device, or before it), signs up and syncs. The sync's own
    /// work ends (it writes its time, as only a sync on demand does) with the check still held; once the answer
    /// comes, the sync ends with its warning, and the server was asked once.
    static func expectTheSyncWaitsForTheHeldCheck(
        _ open: (TestServer, String) throws -> ContactsDevice
    ) async throws {
        let configuration = Self.server(reporting: ReleaseVersion(0, 2, 0))
        try await TestServer.with(configuration: configuration, transport: .loopback) { server in
            try await withTemporaryDirectory { directory in
                let health = server.faults.closeGate(pathPrefix: "/v1/health", method: .get)
                let device = try open(server, directory)
                try await health.waitUntilHeld()
                try await device.account.signUp(
                    username: "ada", password: "correct horse battery", passphrase: testPassphrase)
                let sync = Task { try await device.sync() }
                try await waitUntil("the sync wrote its time") { try device.reader.setting(.lastSync) != nil }
                #expect(device.status.serverWarning == nil)
                health.open()
                try await sync.value
                #expect(
                    device.status.serverWarning?.contains("runs sync-server 0.2.0") == true,
                    "the sync ended with the answer: \(String(describing: device.status.serverWarning))")
                #expect(server.faults.requestCount("GET /v1/health") == 1, "the server was asked once")
            }
        }
    }

    @Test("when the sync fails on an older server, the warning is there too: that is when it explains most")
    func olderServerWarnsWhenTheSyncFails() async throws {
        try await withContactsDevices(1, configuration: Self.server(reporting: ReleaseVersion(0, 2, 0))) {
            server, _, devices in
            // Every database request fails, as a route an older server lacks would; its health answers.
            server.faults.plan = FaultPlan(serviceUnavailable: 1, retryAfter: 0.01)
            await #expect(throws: SyncError.self) { try await devices[0].sync() }
            #expect(devices[0].status.serverWarning?.contains("runs sync-server 0.2.0") == true)
        }
    }

    @Test("a device on a server of this release, or a newer one, says nothing")
    func currentServerSaysNothing() async throws {
        for version in [SyncRelease.version, ReleaseVersion(SyncRelease.version.major + 1, 0, 0)] {
            try await withContactsDevices(1, configuration: Self.server(reporting: version)) { _, _, devices in
                try await devices[0].sync()
                #expect(devices[0].status.serverWarning == nil, "server \(version)")
            }
        }
    }

    @Test("a version that does not read as one is said as it came, cut short")
    func unreadableVersion() throws {
        let url = URL(string: "https://sync.example.org")!
        let warning = try #require(
            ContactsDevice.serverRequirement.warning(
                serverURL: url, reportedVersion: "banana\u{1B}[2J" + String(repeating: "x", count: 500)))
        #expect(warning.contains("reports a version that is not one"), "\(warning)")
        #expect(warning.count < 400, "a server's long text is cut: \(warning.count) characters")
        #expect(!warning.contains("\u{1B}"), "control characters are escaped: \(warning)")
    }
}
