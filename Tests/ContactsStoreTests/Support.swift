import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncCrypto
import SyncServer
import SyncTesting
import Testing

/// Ada's two devices (signed up by ``withContactsDevices``) and Grace's one, on one server: the people of
/// the sharing tests.
struct BookPeople {
    var server: TestServer
    var ada: ContactsDevice
    var adaPhone: ContactsDevice
    var grace: ContactsDevice
}

/// Runs `body` with ``BookPeople`` on a fresh server.
func withBookPeople(_ body: (BookPeople) async throws -> Void) async throws {
    try await withContactsDevices { server, directory, devices in
        let grace = try openDevice("grace", directory: directory, server: server)
        try await grace.account.signUp(
            username: "grace", password: "another good password", passphrase: "grace's own words")
        try await body(BookPeople(server: server, ada: devices[0], adaPhone: devices[1], grace: grace))
    }
}

/// The size of the file at `path` in bytes; 0 when there is none.
func fileBytes(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
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
        try contacts.update(contact, at: date)
    }
}
