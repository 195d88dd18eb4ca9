import ContactsModel
import Foundation
import GRDB
import SyncClient
import SyncCore
import SyncKit
import VCard

/// Contact photos on a device: taken from imported cards, set and removed, written into exports, and
/// downloaded when they are asked for (a device syncs contacts without their images).
extension DeviceContacts {
    /// Gives contact `id` the image in `file` as its photo (saved, stamped and queued as any edit).
    @discardableResult
    public func setPhoto(of id: UUID, file: URL, mediaType: String) throws -> Contact {
        guard var contact = try store.contact(id) else { throw ContactError.unknownID(id.canonicalString) }
        let photo = try photos.keep(file: file, mediaType: mediaType)
        guard photo.size > 0 else { throw ContactError.photoFile("the image file is empty; choose an image") }
        contact.photo = photo
        return try update(contact)
    }

    /// Removes contact `id`'s photo.
    @discardableResult
    public func removePhoto(of id: UUID) throws -> Contact {
        guard var contact = try store.contact(id) else { throw ContactError.unknownID(id.canonicalString) }
        guard contact.photo != nil else { throw ContactError.noPhoto(contact.name) }
        contact.photo = nil
        return try update(contact)
    }

    /// The file of contact `id`'s photo image, downloaded first when this device does not have it yet
    /// (`progress` hears the bytes as they arrive, for a status line).
    public func photoFile(
        of id: UUID, progress: (@Sendable (_ received: Int64, _ total: Int64) -> Void)? = nil
    ) async throws -> URL {
        guard let contact = try store.contact(id) else { throw ContactError.unknownID(id.canonicalString) }
        guard let photo = contact.photo else { throw ContactError.noPhoto(contact.name) }
        return try await photoFile(photo, of: contact, progress: progress)
    }

    /// Downloads the image of every contact photo this device does not have; returns how many it
    /// downloaded and the failures, each saying which contact.
    public func downloadMissingPhotos() async throws -> (downloaded: Int, failures: [String]) {
        var downloaded = 0
        var failures: [String] = []
        for contact in try contactsMissingPhotos() {
            do {
                _ = try await photoFile(contact.photo!, of: contact)
                downloaded += 1
            } catch {
                failures.append("\(contact.name.terminalSafeForMessages): \(error)")
            }
        }
        return (downloaded, failures)
    }

    /// The contacts (of `book`, when given) whose photo this device does not have yet.
    func contactsMissingPhotos(in book: RecordZone.ID? = nil) throws -> [Contact] {
        var missing: [Contact] = []
        try store.forEachContact(in: book) { contact in
            if let photo = contact.photo, !photos.has(photo) { missing.append(contact) }
            return true
        }
        return missing
    }

    func photoFile(
        _ photo: ContactPhoto, of contact: Contact,
        progress: (@Sendable (_ received: Int64, _ total: Int64) -> Void)? = nil
    ) async throws -> URL {
        if photos.has(photo) { return photos.file(for: photo.digest) }
        guard let record = try await store.queue.read({ try ContactStore.serverRecord(contact.id, $0) }),
            let asset = Contact.photoAsset(in: record)
        else {
            throw ContactError.photoFile(
                "the photo of \(contact.name.terminalSafeForMessages) is not on this device and not on the server yet; sync the device that set it, then this one"
            )
        }
        let database =
            record.recordID.zoneID.ownerName == RecordZone.ID.defaultOwnerName
            ? engine.database : sharedEngine.database
        let downloaded = try await database.fetchAssetContent(asset, of: record.recordID, progress: progress)
        return try photos.keep(downloaded: downloaded, for: photo)
    }
}
