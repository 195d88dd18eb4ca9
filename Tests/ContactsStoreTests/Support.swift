import ContactsModel
import ContactsStore
import Foundation
import SyncCrypto
import SyncServer
import SyncTesting
import Testing

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
