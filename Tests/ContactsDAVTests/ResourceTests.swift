import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncClient
import SyncCore
import SyncTesting
import Testing

@testable import ContactsDAV

/// GET, PUT and DELETE of contacts through real HTTP: versions, ETags, conditions, UIDs, what survives a
/// round trip, photos, read-only books, and a PUT merged with another device's edit.
@Suite("CardDAV bridge: contacts")
struct ResourceTests {
    @Test("a contact reads as vCard 3.0, or 4.0 when asked; its ETag is the listing's; If-None-Match answers 304")
    func get() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            let ada = try devices[0].contacts.add(
                Contact(id: .random(), name: "Ada Lovelace", emails: [.init(label: "work", value: "ada@example.org")]))
            let path = Bridge.contacts + ada.id.uuidString + ".vcf"
            var reply = try await bridge.request("GET", path)
            #expect(reply.status == 200)
            #expect(
                reply.body.contains("VERSION:3.0\r\n") && reply.body.contains("EMAIL;TYPE=work:ada@example.org"),
                "\(reply.body)")
            let etag = try #require(reply.header("ETag"))
            let listed = try await bridge.propfind(path, "<d:getetag/>")
            #expect(try listed.first("DAV:", "getetag")?.text == etag)

            reply = try await bridge.request("GET", path, headers: [("Accept", "text/vcard; version=4.0")])
            #expect(reply.body.contains("VERSION:4.0\r\n") && reply.body.contains("UID:urn:uuid:"), "\(reply.body)")
            reply = try await bridge.request("GET", path, headers: [("If-None-Match", etag)])
            #expect(reply.status == 304 && reply.body.isEmpty)
            reply = try await bridge.request("HEAD", path)
            #expect(reply.status == 200 && reply.body.isEmpty && reply.header("ETag") == etag)
            reply = try await bridge.request("GET", Bridge.contacts + UUID().uuidString + ".vcf")
            #expect(reply.status == 404)
        }
    }

    @Test(
        "PUT makes a contact at the client's name, keeps its UID and what the app does not model; a second PUT edits it"
    )
    func putRoundTrip() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            let name = Bridge.contacts + "grace%40example.org.vcf"
            let first = card([
                "UID:grace@example.org", "FN:Grace Hopper", "N:Hopper;Grace;;;", "EMAIL;TYPE=home:grace@example.org",
                "TEL;TYPE=cell:+1 555 0100", "CATEGORIES:Navy,Friends",
                "X-SOCIALPROFILE;TYPE=mastodon:@grace@example.social",
                "ADR;TYPE=home:;;1 Main St;Arlington;VA;22201;USA", "BDAY:1906-12-09",
            ])
            var reply = try await bridge.put(name, first, headers: [("If-None-Match", "*")])
            #expect(reply.status == 201, "\(reply.body)")
            // Stored as sent (every line comes back, the ADR's TYPE with it): the ETag is strong.
            let etag = try #require(reply.header("ETag"))
            let grace = try #require(try devices[0].reader.contacts().first)
            #expect(
                grace.name == "Grace Hopper" && grace.groups == ["Friends", "Navy"]
                    || grace.groups == ["Navy", "Friends"])
            #expect(grace.birthday?.description.contains("1906") == true)

            reply = try await bridge.request("GET", name)
            #expect(reply.header("ETag") == etag)
            for line in [
                "UID:grace@example.org", "X-SOCIALPROFILE;TYPE=mastodon:@grace@example.social",
                "TEL;TYPE=cell:+1 555 0100", "CATEGORIES:",
            ] {
                #expect(reply.body.contains(line), "\(line) in \(reply.body)")
            }
            // The same card again is the same contact, not a second one; an edit keeps the ID.
            reply = try await bridge.put(
                name, first.replacingOccurrences(of: "+1 555 0100", with: "+1 555 0199"), headers: [("If-Match", etag)])
            #expect(reply.status == 204, "\(reply.body)")
            #expect(try await bridge.request("GET", name).header("ETag") != etag)
            #expect(try devices[0].reader.contacts().map(\.id) == [grace.id])
            #expect(try devices[0].reader.contact(grace.id)?.phones.map(\.value) == ["+1 555 0199"])
            // The listing names it where the client put it.
            let listing = try await bridge.propfind(Bridge.contacts, depth: "1", "<d:getetag/>")
            #expect(try listing.responses().keys.contains("/books/Contacts/grace@example.org.vcf"), "\(listing.body)")
        }
    }

    @Test(
        "If-Match and If-None-Match are honoured with 412; a UID of another contact is a 409 naming it; nothing changes"
    )
    func conditions() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            let path = Bridge.contacts + "a.vcf"
            var reply = try await bridge.put(path, card(["UID:a-1", "FN:Ann"]))
            #expect(reply.status == 201)
            let etag = try #require(try await bridge.request("GET", path).header("ETag"))
            reply = try await bridge.put(path, card(["UID:a-1", "FN:Ann Two"]), headers: [("If-None-Match", "*")])
            #expect(reply.status == 412, "\(reply.body)")
            reply = try await bridge.put(path, card(["UID:a-1", "FN:Ann Two"]), headers: [("If-Match", "\"stale-1\"")])
            #expect(reply.status == 412)
            reply = try await bridge.put(
                Bridge.contacts + "new.vcf", card(["UID:b-1", "FN:Bo"]), headers: [("If-Match", "*")])
            #expect(reply.status == 412)
            reply = try await bridge.put(Bridge.contacts + "other.vcf", card(["UID:a-1", "FN:Ann Elsewhere"]))
            #expect(
                reply.status == 409 && reply.body.contains("no-uid-conflict")
                    && reply.body.contains("/books/Contacts/a.vcf"), "\(reply.body)")
            reply = try await bridge.put(path, card(["UID:someone-else", "FN:Ann"]))
            #expect(reply.status == 409, "\(reply.body)")
            #expect(try devices[0].reader.contacts().map(\.name) == ["Ann"])

            reply = try await bridge.request("DELETE", path, headers: [("If-Match", "\"stale-1\"")])
            #expect(reply.status == 412)
            reply = try await bridge.request("DELETE", path, headers: [("If-Match", etag)])
            #expect(reply.status == 204)
            #expect(try devices[0].reader.contacts().isEmpty)
            reply = try await bridge.request("DELETE", path)
            #expect(reply.status == 404)
            #expect(try await bridge.request("GET", path).status == 404)
        }
    }

    @Test("a card with an inline photo gives the contact that photo; a GET has it inline again")
    func photo() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            var image = Data([0xFF, 0xD8, 0xFF, 0xE0])
            for index in 0..<3_000 { image.append(UInt8(truncatingIfNeeded: index &* 31)) }
            let reply = try await bridge.put(
                Bridge.contacts + "p.vcf",
                card(["UID:p-1", "FN:Pat", "PHOTO;ENCODING=b;TYPE=JPEG:" + image.base64EncodedString()]))
            #expect(reply.status == 201, "\(reply.body)")
            let pat = try #require(try devices[0].reader.contacts().first)
            #expect(pat.photo?.size == Int64(image.count) && pat.photo?.mediaType == "image/jpeg")
            let read = try await bridge.request("GET", Bridge.contacts + "p.vcf")
            let unfolded = read.body.replacingOccurrences(of: "\r\n ", with: "")
            #expect(unfolded.contains(image.base64EncodedString()), "\(read.body.prefix(300))")
        }
    }

    /// Grace (a device of her own) makes the book `name` with one contact and shares it with `device`'s
    /// account (Ada), which accepts it: Grace's device, the contact, her book, the book as Ada's device has
    /// it, and its path on the bridge.
    static func bookSharedByGrace(
        _ name: String, holding contactName: String, readOnly: Bool, with device: ContactsDevice, server: TestServer,
        directory: String
    ) async throws -> (grace: ContactsDevice, contact: Contact, book: AddressBook, shared: AddressBook, path: String) {
        let grace = try openDevice("grace", directory: directory, server: server)
        try await grace.account.signUp(username: "grace", password: "correct horse battery", passphrase: testPassphrase)
        let book = try grace.books.createBook(named: name)
        let contact = try grace.contacts.add(Contact(id: .random(), name: contactName), to: book.zoneID)
        try await grace.sync()
        let invitation = try await grace.books.shareBook(book, with: "ada", readOnly: readOnly)
        let shared = try await device.books.acceptInvitation(invitation.description)
        return (grace, contact, book, shared, "/books/" + DAVPath.encoded(DAVPath.segment(of: shared.zoneID)) + "/")
    }

    @Test("a book shared to read only lists and reads, and refuses writes with 403 saying why")
    func readOnlyBook() async throws {
        try await withBridge(devices: 1) { bridge, devices, server, directory in
            let (_, boss, _, shared, bookPath) = try await Self.bookSharedByGrace(
                "Work", holding: "The Boss", readOnly: true, with: devices[0], server: server, directory: directory)
            let listing = try await bridge.propfind(bookPath, "<d:displayname/><d:current-user-privilege-set/>")
            #expect(try listing.first("DAV:", "displayname")?.text == "Work")
            #expect(try listing.first("DAV:", "current-user-privilege-set")?.descendant("DAV:", "write") == nil)
            let path = bookPath + boss.id.uuidString + ".vcf"
            var reply = try await bridge.request("GET", path)
            #expect(reply.status == 200 && reply.body.contains("FN:The Boss"))
            reply = try await bridge.put(path, card(["UID:\(boss.id.uuidString)", "FN:The Big Boss"]))
            #expect(
                reply.status == 403 && reply.body.contains("read only") && reply.body.contains("grace"), "\(reply.body)"
            )
            reply = try await bridge.request("DELETE", path)
            #expect(reply.status == 403)
            reply = try await bridge.put(bookPath + "new.vcf", card(["UID:n-1", "FN:Newcomer"]))
            #expect(reply.status == 403)
            #expect(try devices[0].reader.contacts(in: shared.zoneID).map(\.name) == ["The Boss"])
        }
    }

    @Test("removed from a shared book: after the device syncs, the book and its cards are gone from the bridge (404)")
    func removedFromBook() async throws {
        try await withBridge(devices: 1) { bridge, devices, server, directory in
            let (grace, mum, family, _, bookPath) = try await Self.bookSharedByGrace(
                "Family", holding: "Mum", readOnly: false, with: devices[0], server: server, directory: directory)
            let cardPath = bookPath + mum.id.uuidString + ".vcf"
            #expect(try await bridge.request("GET", cardPath).status == 200)

            try await grace.books.unshareBook(family, from: "ada")
            try await devices[0].sync()
            #expect(try await bridge.request("GET", cardPath).status == 404)
            #expect(try await bridge.propfind(bookPath, "<d:displayname/>").status == 404)
            let put = try await bridge.put(bookPath + "new.vcf", card(["UID:n-2", "FN:Newcomer"]))
            #expect(put.status == 404, "\(put.body)")
            let home = try await bridge.propfind("/books/", depth: "1", "<d:displayname/>")
            #expect(try !home.responses().keys.contains(bookPath))
            #expect(try grace.reader.contacts(in: family.zoneID).map(\.name) == ["Mum"])
        }
    }

    @Test("a PUT is an edit like any other: it syncs, and merges field by field with another device's edit")
    func putMergesWithAnotherDevice() async throws {
        try await withBridge(devices: 2) { bridge, devices, _, _ in
            let (dav, laptop) = (devices[0], devices[1])
            let ada = try laptop.contacts.add(
                Contact(id: .random(), name: "Ada Lovelace", emails: [.init(label: "", value: "ada@example.org")]))
            try await laptop.sync()
            try await dav.sync()
            let path = Bridge.contacts + ada.id.uuidString + ".vcf"
            let before = try await bridge.request("GET", path)
            // The laptop changes the email while a DAV client changes the organisation.
            var edited = try #require(try laptop.reader.contact(ada.id))
            edited.emails = [.init(label: "", value: "ada@analytical.example")]
            try laptop.contacts.update(edited)
            try await laptop.sync()
            let clientCard = before.body.replacingOccurrences(
                of: "END:VCARD", with: "ORG:Analytical Engines\r\nEND:VCARD")
            let reply = try await bridge.put(
                path, clientCard, headers: [("If-Match", try #require(before.header("ETag")))])
            #expect(reply.status == 204, "\(reply.body)")
            try await dav.sync()
            try await laptop.sync()
            for device in [dav, laptop] {
                let merged = try #require(try device.reader.contact(ada.id))
                #expect(
                    merged.organization == "Analytical Engines"
                        && merged.emails.map(\.value) == ["ada@analytical.example"], "\(device.name): \(merged)")
            }
        }
    }

    @Test(
        "a stale PUT without If-Match replaces another device's newer email; the email is in the conflict log on every device, named by who wrote what, and restoring it keeps the client's phone"
    )
    func stalePutWithoutIfMatch() async throws {
        try await withBridge(devices: 2) { bridge, devices, _, _ in
            let (dav, laptop) = (devices[0], devices[1])
            let ada = try laptop.contacts.add(
                Contact(
                    id: .random(), name: "Ada Lovelace", emails: [.init(label: "work", value: "ada@example.org")],
                    phones: [.init(label: "cell", value: "+1 555 0100")]))
            try await laptop.sync()
            try await dav.sync()
            let path = Bridge.contacts + ada.id.uuidString + ".vcf"
            let held = try await bridge.request("GET", path)
            var edited = try #require(try laptop.reader.contact(ada.id))
            edited.emails[0].value = "ada@analytical.example"
            try laptop.contacts.update(edited)
            try await laptop.sync()
            try await dav.sync()
            #expect(try dav.reader.contact(ada.id)?.emails.map(\.value) == ["ada@analytical.example"])

            // The client's copy is older than the bridge's: with its ETag, the PUT is refused.
            let stale = held.body.replacingOccurrences(of: "+1 555 0100", with: "+1 555 0199")
            var reply = try await bridge.put(path, stale, headers: [("If-Match", try #require(held.header("ETag")))])
            #expect(reply.status == 412, "\(reply.body)")
            #expect(try dav.reader.conflicts().isEmpty)
            // Without a condition it is taken, and every value it replaced is logged.
            reply = try await bridge.put(path, stale)
            #expect(reply.status == 204, "\(reply.body)")
            let written = try #require(try dav.reader.contact(ada.id))
            #expect(
                written.emails.map(\.value) == ["ada@example.org"] && written.phones.map(\.value) == ["+1 555 0199"])
            let logged = try dav.reader.conflicts()
            let email = try #require(logged.first { $0.field == .emails }, "\(logged)")
            #expect(email.lost.value.text == "work: ada@analytical.example" && email.lost.device == laptop.name)
            #expect(
                email.kept.value.text == "work: ada@example.org"
                    && email.kept.device == "a CardDAV client on \(dav.name)")
            let phone = try #require(logged.first { $0.field == .phones }, "\(logged)")
            #expect(phone.lost.value.text == "cell: +1 555 0100" && phone.kept.value.text == "cell: +1 555 0199")
            #expect(logged.count == 2, "\(logged)")

            // The log travels; restored on the laptop, the email comes back and the client's phone stays.
            try await dav.sync()
            try await laptop.sync()
            let there = try #require(try laptop.reader.conflicts().first { $0.field == .emails })
            _ = try laptop.contacts.restoreConflict(there.id)
            try await laptop.sync()
            try await dav.sync()
            for device in [dav, laptop] {
                let contact = try #require(try device.reader.contact(ada.id))
                #expect(
                    contact.emails.map(\.value) == ["ada@analytical.example"]
                        && contact.phones.map(\.value) == ["+1 555 0199"], "\(device.name): \(contact)")
            }
            // A PUT that changes nothing logs nothing.
            let current = try await bridge.request("GET", path)
            #expect(try await bridge.put(path, current.body).status == 204)
            let remaining = try dav.reader.conflicts()
            #expect(remaining.map(\.field) == [.phones], "\(remaining)")
        }
    }

    @Test(
        "a PUT answers a strong ETag only when a GET gives back the card as sent (RFC 6352 §6.3.2.3), and that ETag is the GET's"
    )
    func etagOnlyWhenStoredAsSent() async throws {
        try await withBridge(devices: 1) { bridge, _, _, _ in
            let path = Bridge.contacts + "lin.vcf"
            var reply = try await bridge.put(
                path, card(["UID:lin-1", "FN:Lin Chen", "EMAIL;TYPE=INTERNET;TYPE=WORK:lin@example.org"]))
            #expect(reply.status == 201 && reply.header("ETag") == nil, "\(reply.headers)")
            let stored = try await bridge.request("GET", path)
            // The card as the bridge gives it, edited and written back: stored as sent, so the ETag is strong.
            let edited = stored.body.replacingOccurrences(of: "lin@example.org", with: "lin@example.net")
            reply = try await bridge.put(path, edited, headers: [("If-Match", try #require(stored.header("ETag")))])
            #expect(reply.status == 204, "\(reply.body)")
            let etag = try #require(reply.header("ETag"))
            let again = try await bridge.request("GET", path)
            // The same lines (in the order the app writes them).
            func lines(_ text: String) -> [Substring] { text.split(separator: "\r\n").sorted() }
            #expect(again.header("ETag") == etag && lines(again.body) == lines(edited), "\(again.body)")
        }
    }
}
