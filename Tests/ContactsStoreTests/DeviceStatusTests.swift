import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncKit
import SyncServer
import SyncTesting
import Synchronization
import Testing

@Suite("Contacts: one status stream per device (scheduler, last outcome, conflict and tamper counts)")
struct DeviceStatusTests {
    @Test(
        "a subscriber sees the conflict count rise once a conflicting edit syncs, and keeps its stream when the device replaces its engines"
    )
    func conflictCount() async throws {
        let clock = TestClock()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: start)
        let now: @Sendable () -> Date = { start.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
        try await withContactsDevices(2, configuration: configuration, clocks: [now, now]) { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.contacts.add(Contact(name: "Ada"))
            for device in devices { try await device.sync() }

            let statuses = StatusRecorder(b.statusUpdates)
            try await waitUntil("the subscriber gets the current status first") {
                statuses.latest != nil
            } observed: {
                statuses.description
            }
            #expect(statuses.latest?.conflictCount == 0)
            #expect(statuses.latest?.scheduler == nil, "this device syncs only when asked")
            #expect(statuses.latest?.lastOutcome?.failure == nil)

            // Both rename Ada without seeing the other's edit: the older name goes to the conflict log.
            await clock.advance(by: .seconds(60))
            try a.edit("Ada") { $0.name = "Ada King" }
            await clock.advance(by: .seconds(60))
            try b.edit("Ada") { $0.name = "Ada Lovelace" }
            try await a.sync()
            try await b.sync()
            try await waitUntil("the subscriber sees one conflict") {
                statuses.latest?.conflictCount == 1
            } observed: {
                statuses.description
            }
            #expect(try b.reader.conflictCount() == 1)
            #expect(statuses.all.map(\.conflictCount).contains(0), "the count rose from 0")

            // Deleting local data gives the device new engines; the stream is the device's, and goes on.
            try await b.account.deleteLocalData()
            let outcomes = statuses.all.count { $0.lastOutcome != nil }
            try await b.sync()
            try await waitUntil("the subscriber hears of the sync after the engines were replaced") {
                statuses.all.count { $0.lastOutcome != nil } > outcomes && statuses.latest?.lastOutcome?.failure == nil
            } observed: {
                statuses.description
            }
            #expect(try b.reader.contacts().map(\.name) == ["Ada Lovelace"])
        }
    }

    @Test(
        "a device that syncs by itself: the status carries its scheduler's state, before and after its engines are replaced"
    )
    func schedulerState() async throws {
        let server = try await TestServer.start()
        do {
            try await withTemporaryDirectory { directory in
                let device = try ContactsDevice(
                    .init(
                        dataDirectory: directory, deviceName: "a", serverURL: URL(string: server.baseURL)!,
                        automaticallySync: true, keyDerivation: cheapKeyDerivation,
                        // Sends at once under the load of the suite beside it: the hold is SyncSchedulerTests'.
                        holdsWorkUnderLoad: false))
                let statuses = StatusRecorder(device.statusUpdates)
                try await device.account.signUp(
                    username: "ada", password: "correct horse battery", passphrase: testPassphrase)
                try await waitUntil("the first status carries the scheduler's") {
                    statuses.latest?.scheduler != nil
                } observed: {
                    statuses.description
                }

                try device.contacts.add(Contact(name: "Ada Lovelace"))
                try await waitUntil("the scheduler's send succeeds, as the status says") {
                    try statuses.latest?.scheduler?.status.lastSuccessWork == .send
                        && (try device.reader.pendingCount()) == 0
                } observed: {
                    statuses.description
                }

                try await device.account.deleteLocalData()
                let replaced = Date()
                try device.contacts.add(Contact(name: "Grace Hopper"))
                try await waitUntil("the new engine's scheduler reports through the same stream") {
                    guard let scheduler = statuses.latest?.scheduler, let success = scheduler.lastSuccess else {
                        return false
                    }
                    return try success >= replaced && (try device.reader.pendingCount()) == 0
                } observed: {
                    statuses.description
                }
            }
            try await server.stop()
        } catch {
            try? await server.stop()
            throw error
        }
    }
}

/// The statuses a device's stream delivers, collected as they come.
final class StatusRecorder: Sendable, CustomStringConvertible {
    private final class Storage: Sendable {
        let statuses = Mutex<[DeviceStatus]>([])
    }

    private let storage = Storage()
    private let task: Task<Void, Never>

    init(_ updates: AsyncStream<DeviceStatus>) {
        let storage = self.storage
        task = Task {
            for await status in updates { storage.statuses.withLock { $0.append(status) } }
        }
    }

    deinit { task.cancel() }

    var all: [DeviceStatus] { storage.statuses.withLock { $0 } }
    var latest: DeviceStatus? { all.last }

    var description: String {
        all.map { status in
            let scheduler = status.scheduler.map { "\($0.status.decision)" } ?? "no scheduler"
            let outcome = status.lastOutcome.map { $0.failure ?? "succeeded" } ?? "no outcome"
            return "\(scheduler); \(outcome); conflicts \(status.conflictCount), tampered \(status.tamperedCount)"
        }.joined(separator: "\n")
    }
}
