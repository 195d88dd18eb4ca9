import ContactsModel
import Foundation
import SyncCore
import VCard

extension DeviceInterchange {
    /// How many bytes of vCard text an export hands on at once.
    static let exportPiece = 1 << 16

    /// Writes every contact as vCard text, in list order, handing `write` a piece of about 64 KiB at a
    /// time (whole cards, so a store of a million contacts is never held whole); only those of `book`
    /// when given. Each card has its photo inline unless `photos` is false: a photo this device does not
    /// have yet is downloaded first, before anything is written, so that a failed download writes nothing.
    /// Returns how many contacts it wrote.
    @discardableResult
    public func exportVCards(
        version: VCard.Version = .v4, book: RecordZone.ID? = nil, photos: Bool = true,
        to write: ([UInt8]) throws -> Void
    ) async throws -> Int {
        if photos {
            for contact in try device.contacts.contactsMissingPhotos(in: book) {
                _ = try await device.contacts.photoFile(contact.photo!, of: contact)
            }
        }
        var text: [UInt8] = []
        text.reserveCapacity(Self.exportPiece + 4096)
        var count = 0
        try store.forEachContact(in: book) { contact in
            VCardSerializer.append(try card(of: contact, version: version, photos: photos), to: &text)
            count += 1
            if text.count >= Self.exportPiece {
                try write(text)
                text.removeAll(keepingCapacity: true)
            }
            return true
        }
        if !text.isEmpty { try write(text) }
        return count
    }

    /// ``exportVCards(version:book:photos:to:)`` as one string, for a handful of contacts.
    public func exportVCards(version: VCard.Version = .v4, book: RecordZone.ID? = nil, photos: Bool = true)
        async throws -> String
    {
        var text: [UInt8] = []
        try await exportVCards(version: version, book: book, photos: photos) { text += $0 }
        return String(decoding: text, as: UTF8.self)
    }

    /// The cards of `contacts` with their photos inline, as `version` writes them; a photo this device
    /// does not have is downloaded first.
    public func vCardsWithPhotos(_ contacts: [Contact], version: VCard.Version) async throws -> [VCard] {
        var cards: [VCard] = []
        cards.reserveCapacity(contacts.count)
        for contact in contacts {
            if let photo = contact.photo { _ = try await device.contacts.photoFile(photo, of: contact) }
            cards.append(try card(of: contact, version: version, photos: true))
        }
        return cards
    }

    /// `contact`'s card, with its photo inline when `photos` is true; the photo's image must be on this
    /// device already.
    private func card(of contact: Contact, version: VCard.Version, photos: Bool) throws -> VCard {
        var card = contact.vCard(version: version)
        guard photos, let photo = contact.photo else { return card }
        guard self.photos.has(photo) else {
            throw ContactError.photoFile(
                "the photo of \(contact.name.terminalSafeForMessages) changed while it was being exported; export again"
            )
        }
        let image = try Data(contentsOf: self.photos.file(for: photo.digest))
        card.properties.append(photo.vCardProperty(image: image, version: version))
        return card
    }
}
