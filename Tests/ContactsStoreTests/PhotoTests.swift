import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncServer
import SyncTesting
import Testing
import VCard

/// Contact photos: vCard `PHOTO` taken in as an asset, written back with the same image, synced as an
/// encrypted asset that other devices download only when it is asked for.
@Suite("Contact photos: import, export, lazy sync, set and remove")
struct PhotoTests {
    /// The image of the contact named `name` in an export.
    static func exportedImage(_ export: String, of name: String) throws -> Data? {
        let cards = VCardParser.parse(export).cards
        let card = try #require(cards.first { $0.first("FN")?.text == name })
        return card.first("PHOTO").flatMap(ContactPhoto.inlineImage)?.bytes
    }

    @Test(
        "an inline PHOTO (3.0 ENCODING=b, 4.0 data:) becomes the contact's photo; exports carry the same image; a PHOTO URL stays as it was"
    )
    func importAndExport() async throws {
        try await withContactsDevices(1) { _, _, devices in
            let device = devices[0]
            let jpeg = TestPhotos.image(40_000, seed: 1)
            let png = TestPhotos.image(3_000, seed: 2)
            let text =
                TestPhotos.card("Ada", v3: jpeg) + TestPhotos.card("Grace", v3: nil, v4: png)
                + "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Alan\r\nPHOTO:https://example.org/alan.jpg\r\nEND:VCARD\r\n"
                // This app's own line, as a crafted card could carry it: it names an image nobody has.
                + "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Mallory\r\nX-SYNCKIT-PHOTO:\(String(repeating: "ab", count: 32));10;image/jpeg\r\nEND:VCARD\r\n"
            let report = try device.interchange.importVCards(text)
            #expect(report.problems.isEmpty && report.imported == 4)
            let contacts = Dictionary(uniqueKeysWithValues: try device.store.contacts().map { ($0.name, $0) })
            let ada = try #require(contacts["Ada"]?.photo)
            #expect(ada.mediaType == "image/jpeg" && ada.size == 40_000)
            #expect(try Data(contentsOf: device.photos.file(for: ada.digest)) == jpeg)
            #expect(contacts["Ada"]?.extras.contains { $0.contains("PHOTO") } == false, "taken out of the extras")
            #expect(contacts["Grace"]?.photo?.mediaType == "image/png")
            #expect(contacts["Alan"]?.photo == nil)
            #expect(contacts["Alan"]?.extras == ["PHOTO:https://example.org/alan.jpg"])
            #expect(
                contacts["Mallory"]?.photo == nil && contacts["Mallory"]?.extras == [], "the crafted line is dropped")
            let mode =
                try FileManager.default.attributesOfItem(atPath: device.photos.file(for: ada.digest).path)[
                    .posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600)

            for version in [VCard.Version.v3, .v4] {
                let export = try await device.interchange.exportVCards(version: version)
                #expect(try Self.exportedImage(export, of: "Ada") == jpeg, "\(version)")
                #expect(try Self.exportedImage(export, of: "Grace") == png, "\(version)")
                #expect(export.contains("PHOTO:https://example.org/alan.jpg"), "\(version)")
            }
            let plain = try await device.interchange.exportVCards(photos: false)
            #expect(!plain.contains("base64") && !plain.contains("ENCODING=b"))
        }
    }

    @Test(
        "another device syncs the contacts without their images, downloads one when asked and the rest with downloadMissingPhotos; the server holds ciphertext only"
    )
    func lazySync() async throws {
        try await withContactsDevices { server, _, devices in
            let (laptop, phone) = (devices[0], devices[1])
            let images = (1...3).map { TestPhotos.image(20_000 + $0, seed: UInt32($0) * 7) }
            _ = try laptop.interchange.importVCards(
                images.enumerated().map { TestPhotos.card("P\($0.offset)", v3: $0.element) }.joined())
            try await laptop.sync()
            try await phone.sync()
            let contacts = try phone.store.contacts().sorted { $0.name < $1.name }
            #expect(contacts.map(\.name) == ["P0", "P1", "P2"])
            #expect(contacts.allSatisfy { $0.photo != nil && !phone.photos.has($0.photo!) }, "no image downloaded yet")
            let file = try await phone.contacts.photoFile(of: contacts[1].id)
            #expect(try Data(contentsOf: file) == images[1])
            let (downloaded, failures) = try await phone.contacts.downloadMissingPhotos()
            #expect(downloaded == 2 && failures.isEmpty)
            for (contact, image) in zip(contacts, images) {
                #expect(try Data(contentsOf: phone.photos.file(for: contact.photo!.digest)) == image)
            }
            // What the server keeps of the images: their ciphertext, no run of 32 bytes of any image.
            var stored = Data()
            let assets = try FileManager.default.contentsOfDirectory(atPath: server.storagePath + "-assets")
            #expect(assets.count == 3, "\(assets)")
            for name in assets {
                stored += try Data(contentsOf: URL(fileURLWithPath: server.storagePath + "-assets/" + name))
            }
            for image in images {
                for start in stride(from: 0, to: image.count - 32, by: 1000) {
                    #expect(stored.range(of: image[start..<(start + 32)]) == nil)
                }
            }
        }
    }

    @Test("an edit of another field keeps the photo; a photo set or removed on one device reaches the other")
    func setAndRemove() async throws {
        try await withContactsDevices { server, _, devices in
            let (laptop, phone) = (devices[0], devices[1])
            let first = TestPhotos.image(10_000, seed: 3)
            let second = TestPhotos.image(12_000, seed: 4)
            _ = try laptop.interchange.importVCards(TestPhotos.card("Ada", v3: first))
            try await laptop.sync()
            try await phone.sync()
            var ada = try #require(try phone.store.contacts().first)
            #expect(ada.photo != nil, "the phone knows of the photo")
            ada.notes = "edited on the phone, photo not downloaded"
            ada = try phone.contacts.update(ada)
            try await phone.sync()
            try await laptop.sync()
            let onLaptop = try #require(try laptop.store.contacts().first)
            #expect(onLaptop.notes == ada.notes)
            #expect(onLaptop.photo?.digest == ada.photo?.digest, "the photo stays")
            #expect(
                try Data(contentsOf: try await phone.contacts.photoFile(of: ada.id)) == first, "and still downloads")

            let secondFile = URL(fileURLWithPath: TemporaryFiles.path("second", extension: "png"))
            try second.write(to: secondFile)
            defer { try? FileManager.default.removeItem(at: secondFile) }
            try phone.contacts.setPhoto(of: ada.id, file: secondFile, mediaType: "image/png")
            try await phone.sync()
            try await laptop.sync()
            let changed = try #require(try laptop.store.contacts().first?.photo)
            #expect(changed.mediaType == "image/png" && changed.size == 12_000)
            #expect(try Data(contentsOf: try await laptop.contacts.photoFile(of: ada.id)) == second)

            try laptop.contacts.removePhoto(of: ada.id)
            try await laptop.sync()
            try await phone.sync()
            #expect(try phone.store.contacts().first?.photo == nil)
            let error = await #expect(throws: ContactError.self) { _ = try await phone.contacts.photoFile(of: ada.id) }
            #expect(error?.description.contains("has no photo") == true)
            _ = server
        }
    }
}
