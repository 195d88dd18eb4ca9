import ContactsStore
import Foundation
import SyncCrypto
import SyncServer
import SyncTesting

// What the contacts test targets share: devices of one account on a real
// server, and the account's cheap key derivation. Not part of any product.

/// `count` devices of one account, each its own SQLite file, syncing through a real server (through its
/// router in this process: these devices sync when told, so they open no push socket; `transport:
/// .loopback` for a listener, which `automaticallySync` devices need for push); device `i` reads the
/// time from `clocks[i]` when given.
public func withContactsDevices(
    _ count: Int = 2, configuration: SyncServerConfiguration = .testing, clocks: [@Sendable () -> Date] = [],
    transport: TestServer.Transport = .inProcess, automaticallySync: Bool = false,
    _ body: (TestServer, String, [ContactsDevice]) async throws -> Void
) async throws {
    try await TestServer.with(configuration: configuration, transport: transport) { server in
        try await withTemporaryDirectory { directory in
            var devices: [ContactsDevice] = []
            for index in 0..<count {
                var clock: @Sendable () -> Date = { Date() }
                if index < clocks.count { clock = clocks[index] }
                let device = try openDevice(
                    "device-\(index)", directory: directory, server: server, automaticallySync: automaticallySync,
                    clock: clock)
                if index == 0 {
                    try await device.account.signUp(
                        username: "ada", password: "correct horse battery", passphrase: testPassphrase)
                } else {
                    try await device.account.signIn(
                        username: "ada", password: "correct horse battery", passphrase: testPassphrase)
                }
                devices.append(device)
            }
            try await body(server, directory, devices)
        }
    }
}

/// The account's passphrase in these tests.
public let testPassphrase = "orbit maple quiet lantern"

/// Cheap scrypt parameters: a debug build derives the default ones in about a second.
public let cheapKeyDerivation = try! ScryptParameters(costN: 1 << 10, blockSizeR: 8, parallelismP: 1)

/// A device of the tests. With automatic sync it sends and fetches at once, whatever the machine's load:
/// holding work under load (``LoadProbe``) for up to a minute is `SyncWhenBusyTests`' to test, and would
/// outlast the waits of tests running beside a busy suite.
/// `serverVersionCheck` is a check begun before the device opens, as `contacts` begins one.
public func openDevice(
    _ name: String, directory: String, server: TestServer, automaticallySync: Bool = false,
    clock: @escaping @Sendable () -> Date = { Date() }, serverVersionCheck: Task<String?, Never>? = nil
) throws -> ContactsDevice {
    var options = ContactsDevice.Options(
        dataDirectory: directory, deviceName: name, serverURL: URL(string: server.baseURL)!,
        automaticallySync: automaticallySync, keyDerivation: cheapKeyDerivation, clock: clock,
        holdsWorkUnderLoad: false)
    options.serverVersionCheck = serverVersionCheck
    return try ContactsDevice(options)
}
