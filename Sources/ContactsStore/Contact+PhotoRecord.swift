import ContactsModel
import Foundation
import SyncClient
import SyncCore

/// A contact's photo in its record: the image is an asset in the plain field `photo` (the server must
/// see the asset's ID to keep it; its key is sealed), the description (type, size, SHA-256) inside the
/// encrypted contact.
extension Contact {
    /// The field that holds the photo's asset.
    public static let photoField = "photo"

    /// Sets the record's photo asset for the contact stored as `stored`: kept from `base` (the last known
    /// server record) when that record's contact had the same image, a new asset from the image's file
    /// when the image changed, none when the contact has no photo.
    static func setPhotoAsset(of record: inout RecordValue, stored: Data, base: RecordValue?, photos: ContactPhotos) {
        guard let digest = ContactPhoto.digest(inStoredForm: stored) else {
            if record[photoField] != nil { record[photoField] = nil }
            return
        }
        if let base, base[photoField] != nil,
            base[encrypted: contactField]?.bytesValue.flatMap(ContactPhoto.digest) == digest
        {
            return
        }
        // An image this device does not have (never downloaded, or its file removed) cannot go up: the
        // record keeps what it had, and the rest of the contact syncs.
        let file = photos.file(for: digest)
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        record[photoField] = Asset(fileURL: file).recordFieldValue
    }

    /// The photo asset a contact's record names, as this device has it.
    static func photoAsset(in record: RecordValue) -> Asset? {
        guard case .asset(let reference) = record[photoField] else { return nil }
        return Asset(reference: reference)
    }
}
