import ContactsModel
import Foundation
import SyncCore
import SyncKit

/// What the device's roles share about its session and its engines.
extension ContactsDevice {
    /// The record types this app always seals, every field of them: a contact (its whole content and the
    /// device that saved it), a book's name, a conflict log entry. A plain value in one is a forgery.
    public static let sealedRecordTypes = SealedRecordTypes([
        Contact.recordType: .all, AddressBook.recordType: .all, ContactConflict.recordType: .all,
        VerifiedKeyRecord.recordType: .all,
    ])

    /// The device's photo images.
    public var photos: ContactPhotos { store.photos }

    /// Whether this device has a session (it may have ended on the server since).
    public var isSignedIn: Bool { credentials.token != nil }

    /// This device's session token; throws when it is signed out.
    func signedInToken() throws -> String {
        guard let token = credentials.token else {
            throw DeviceError.notSignedIn
        }
        return token
    }

    /// A new engine from the saved state, with the keyring of the passphrase held now.
    func replaceEngine() async {
        await cancelEngines()
        // Never fails for a store that opened: its settings were read before.
        try? makeEngines(states: (try store.engineState(.engineState), try store.engineState(.sharedEngineState)))
    }
}
