import ContactsModel
import ContactsStore
import Foundation
import SyncCrypto
import SyncServer
import SyncTesting
import Testing

/// A fresh data directory, removed after `body`.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = NSTemporaryDirectory() + "contacts-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// `count` devices of one account, each its own SQLite file, syncing through a real server (through its
/// router in this process: these devices sync when told, so they open no push socket; `transport:
/// .loopback` for a listener); device `i` reads the time from `clocks[i]` when given.
func withContactsDevices(
    _ count: Int = 2, configuration: SyncServerConfiguration = .testing, clocks: [@Sendable () -> Date] = [],
    transport: TestServer.Transport = .inProcess, _ body: (TestServer, String, [ContactsDevice]) async throws -> Void
) async throws {
    try await TestServer.with(configuration: configuration, transport: transport) { server in
        try await withTemporaryDirectory { directory in
            var devices: [ContactsDevice] = []
            for index in 0..<count {
                var clock: @Sendable () -> Date = { Date() }
                if index < clocks.count { clock = clocks[index] }
                let device = try openDevice("device-\(index)", directory: directory, server: server, clock: clock)
                if index == 0 {
                    try await device.signUp(
                        username: "ada", password: "correct horse battery", passphrase: testPassphrase)
                } else {
                    try await device.signIn(
                        username: "ada", password: "correct horse battery", passphrase: testPassphrase)
                }
                devices.append(device)
            }
            try await body(server, directory, devices)
        }
    }
}

/// The account's passphrase in these tests.
let testPassphrase = "orbit maple quiet lantern"

/// Cheap scrypt parameters: a debug build derives the default ones in about a second.
let cheapKeyDerivation = try! ScryptParameters(costN: 1 << 10, blockSizeR: 8, parallelismP: 1)

func openDevice(
    _ name: String, directory: String, server: TestServer, clock: @escaping @Sendable () -> Date = { Date() }
) throws -> ContactsDevice {
    try ContactsDevice(
        .init(
            dataDirectory: directory, deviceName: name, serverURL: URL(string: server.baseURL)!,
            automaticallySync: false, keyDerivation: cheapKeyDerivation, clock: clock))
}

extension ContactsDevice {
    /// Names of every contact, in list order.
    var names: [String] { (try? store.contacts().map(\.name)) ?? [] }

    /// The one contact whose name is `name`.
    func contact(named name: String) throws -> Contact {
        try #require(try store.contacts().first(where: { $0.name == name }), "no contact named \(name)")
    }

    /// Edits the contact named `name`, at `date` by this device's clock (its own clock when nil).
    func edit(_ name: String, at date: Date? = nil, _ change: (inout Contact) -> Void) throws {
        var contact = try self.contact(named: name)
        change(&contact)
        try update(contact, at: date)
    }
}
