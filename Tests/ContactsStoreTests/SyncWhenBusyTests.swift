import ContactsModel
import ContactsTesting
import Foundation
import SyncKit
import SyncTesting
import Testing

@testable import ContactsStore

/// `contacts --sync-when-busy`: a device whose automatic sync does not hold its work while the machine is
/// busy. The hold itself is tested with a fake load in SyncSchedulerTests; the end-to-end tests in tmux run
/// their apps with the option, beside a suite that keeps the load high.
@Suite("Contacts: syncing at once on a busy machine")
struct SyncWhenBusyTests {
    @Test(
        "by default the scheduler holds work under load; with the option it does not, after its engines are replaced too"
    )
    func loadHoldFollowsTheOption() async throws {
        try await TestServer.with(transport: .inProcess) { server in
            try await withTemporaryDirectory { directory in
                func open(_ name: String, holds: Bool) throws -> ContactsDevice {
                    try ContactsDevice(
                        .init(
                            dataDirectory: directory, deviceName: name, serverURL: URL(string: server.baseURL)!,
                            automaticallySync: true, keyDerivation: cheapKeyDerivation, holdsWorkUnderLoad: holds))
                }
                func holdsUnderLoad(_ device: ContactsDevice) -> [Bool] {
                    device.engines.map { engine in engine.scheduler?.probes.contains { $0 is LoadProbe } == true }
                }
                let patient = try open("patient", holds: true)
                let busy = try open("busy", holds: false)
                #expect(holdsUnderLoad(patient) == [true, true])
                #expect(holdsUnderLoad(busy) == [false, false])
                #expect(busy.engines.allSatisfy { $0.scheduler?.probes.contains { $0 is PowerProbe } == true })

                try await busy.account.signUp(
                    username: "ada", password: "correct horse battery", passphrase: testPassphrase)
                try await busy.account.deleteLocalData()
                #expect(holdsUnderLoad(busy) == [false, false], "the new engines keep the option")
            }
        }
    }
}
