import Foundation
import SyncCore
import SyncKit

/// One of a device's jobs, found on the device by its name: ``ContactsDevice/contacts`` (contacts and
/// their edits, conflicts, photos, tampered records), ``ContactsDevice/account`` (signing up and in,
/// sessions, the passphrase), ``ContactsDevice/books`` (address books and sharing) and
/// ``ContactsDevice/interchange`` (vCards, CSV, mail, and what the CardDAV bridge reads and writes).
/// The device opens and owns what they share: the store, the engines, the status; sync is the device's
/// own (`Sync/`), as it is the engines' delegate.
protocol DeviceRole: Sendable {
    var device: ContactsDevice { get }
}

extension DeviceRole {
    var options: ContactsDevice.Options { device.options }
    var store: ContactStore { device.store }
    var credentials: CredentialStore { device.credentials }
    var engine: SyncEngine { device.engine }
    var sharedEngine: SyncEngine { device.sharedEngine }
    var engines: [SyncEngine] { device.engines }

    /// ``ContactsDevice/write(durable:_:)``.
    func write<T: Sendable>(durable: Bool = true, _ body: @Sendable (ContactStore.Transaction) throws -> T) throws
        -> T
    {
        try device.write(durable: durable, body)
    }

    func announce(_ activity: ContactsDevice.Activity) { device.announce(activity) }

    var photos: ContactPhotos { device.photos }
    var name: String { device.name }
    var isSignedIn: Bool { device.isSignedIn }
    func signedInToken() throws -> String { try device.signedInToken() }
    func replaceEngine() async { await device.replaceEngine() }
    func cancelEngines() async { await device.cancelEngines() }
    func makeEngines(states: (private: SyncEngine.State.Serialization?, shared: SyncEngine.State.Serialization?))
        throws
    {
        try device.makeEngines(states: states)
    }
    func keyring(_ passphrase: String) -> Keyring { device.keyring(passphrase) }
    func sync(fetch: Bool = true, send: Bool = true) async throws { try await device.sync(fetch: fetch, send: send) }
}

/// Contacts and their edits, conflicts, photos and tampered records.
public struct DeviceContacts: DeviceRole {
    let device: ContactsDevice
}

/// The account: signing up, in and out, sessions, the passphrase, deleting data.
public struct DeviceAccount: DeviceRole {
    let device: ContactsDevice
}

/// Address books, and sharing them.
public struct DeviceBooks: DeviceRole {
    let device: ContactsDevice
}

/// Contacts in and out of other formats and programs: vCards, CSV, mail headers, and the CardDAV bridge's
/// resources, change log and group cards.
public struct DeviceInterchange: DeviceRole {
    let device: ContactsDevice
}

extension ContactsDevice {
    /// Contacts and their edits, conflicts, photos and tampered records.
    public var contacts: DeviceContacts { DeviceContacts(device: self) }
    /// The account: signing up, in and out, sessions, the passphrase, deleting data.
    public var account: DeviceAccount { DeviceAccount(device: self) }
    /// Address books, and sharing them.
    public var books: DeviceBooks { DeviceBooks(device: self) }
    /// vCards, CSV, mail headers, and the CardDAV bridge's resources and change log.
    public var interchange: DeviceInterchange { DeviceInterchange(device: self) }
}
