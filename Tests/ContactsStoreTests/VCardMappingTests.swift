import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncKit
import Testing
import VCard

@Suite("Contacts: vCard import and export")
struct VCardMappingTests {
    static let sampleFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Assets/sample-contacts.vcf")

    @Test(
        "names in any script, emoji and unknown properties survive export and import",
        arguments: [VCard.Version.v3, .v4])
    func roundTrip(version: VCard.Version) throws {
        let contact = Contact(
            name: "Zoë 张伟 🙂", emails: [LabeledValue(label: "work", value: "zoe@example.org")],
            phones: [LabeledValue(label: "cell", value: "+1 555 0100"), LabeledValue(label: "", value: "555-0101")],
            organization: "Ångström; Research",
            address: PostalAddress(
                street: "1 Rue de l'Été\nBât. B", city: "Paris", postalCode: "75001", country: "France"),
            notes: "likes, semicolons; and\nnew lines 👩‍👩‍👧", birthday: ContactDate("1990-01-02"),
            anniversary: ContactDate("--06-30"), groups: ["Friends", "Paris, France"],
            extras: ["X-SOCIALPROFILE;TYPE=mastodon:@zoe@example.social", "item1.X-ABLABEL:Née"])
        let text = VCardSerializer.serialize(contact.vCard(version: version))
        let parsed = VCardParser.parse(text)
        #expect(parsed.problems.isEmpty)
        let back = Contact(vCard: try #require(parsed.cards.first))
        #expect(back.id == contact.id)
        #expect(back.name == contact.name)
        #expect(back.emails.map { [$0.label, $0.value] } == contact.emails.map { [$0.label, $0.value] })
        #expect(back.phones.map { [$0.label, $0.value] } == contact.phones.map { [$0.label, $0.value] })
        #expect(back.organization == contact.organization)
        #expect(back.address == contact.address)
        #expect(back.notes == contact.notes)
        #expect(back.birthday == contact.birthday && back.anniversary == contact.anniversary)
        #expect(back.groups == contact.groups)
        #expect(back.extras.filter { !$0.hasPrefix("N:") } == contact.extras)
    }

    @Test("the sample file imports whole, and a second device gets the same contacts through export")
    func sampleFile() async throws {
        let text = try String(contentsOf: Self.sampleFile, encoding: .utf8)
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            let report = try a.interchange.importVCards(text)
            #expect(report.problems.isEmpty, "\(report.problems)")
            #expect(report.imported >= 30)
            let exported = try await a.interchange.exportVCards()
            let again = try b.interchange.importVCards(exported)
            #expect(again.problems.isEmpty)
            let (left, right) = (try a.store.contacts(), try b.store.contacts())
            #expect(left.count == right.count)
            for (x, y) in zip(left, right) {
                #expect(x.name == y.name && x.id == y.id && x.notes == y.notes)
                #expect(x.extras == y.extras)
            }
        }
    }

    @Test("a malformed card is skipped and reported with its line; the rest import")
    func malformedCard() async throws {
        let text = """
            BEGIN:VCARD\r
            VERSION:4.0\r
            FN:Good One\r
            END:VCARD\r
            BEGIN:VCARD\r
            VERSION:4.0\r
            FN:Broken\r
            this line has no colon\r
            END:VCARD\r
            BEGIN:VCARD\r
            VERSION:4.0\r
            FN:Bad Email\r
            EMAIL:not-an-address\r
            END:VCARD\r
            BEGIN:VCARD\r
            VERSION:3.0\r
            FN:Good Two\r
            END:VCARD\r

            """
        try await withContactsDevices(1) { _, _, devices in
            let report = try devices[0].interchange.importVCards(text)
            #expect(report.imported == 2)
            #expect(report.problems.map(\.line) == [8, 10])
            #expect(report.problems[1].message.contains("not an email"))
            #expect(devices[0].names == ["Good One", "Good Two"])
        }
    }

    @Test("importing 10,000 contacts reports progress and keeps every one")
    func largeImport() async throws {
        var text = ""
        for index in 0..<10_000 {
            text += "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Person \(index)\r\nEMAIL;TYPE=work:p\(index)@example.org\r\n"
            text += "TEL;TYPE=cell:+1 555 \(1000 + index % 9000)\r\nNOTE:imported\r\nEND:VCARD\r\n"
        }
        try await withContactsDevices(1) { _, _, devices in
            var progress: [Int] = []
            let start = ContinuousClock.now
            var fractions: [Double] = []
            let report = try devices[0].interchange.importVCards(text) { done in
                progress.append(done.cards)
                fractions.append(done.fraction)
            }
            print("imported 10,000 vCards in \(ContinuousClock.now - start)")
            #expect(report.imported == 10_000)
            #expect(progress.count >= 10 && progress.last == 10_000)
            #expect(fractions == fractions.sorted() && fractions.last == 1)
            #expect(try devices[0].store.count() == 10_000)
            #expect(try devices[0].store.pendingCount() == 10_000)
            #expect(devices[0].engine.state.hasPendingUntrackedChanges)
        }
    }
}

@Suite("Contacts: three-way merge")
struct MergeTests {
    let t0 = Date(timeIntervalSince1970: 1_000_000)
    var t1: Date { t0.addingTimeInterval(10) }
    var t2: Date { t0.addingTimeInterval(20) }

    @Test("a field changed on one side takes that side, whatever the times")
    func oneSideChanged() {
        let base = Contact(name: "Base", organization: "Org", modified: t0)
        var local = base
        local.name = "Local"
        local.modified[.name] = t0.addingTimeInterval(-50)  // a skewed clock does not matter
        var remote = base
        remote.organization = "Remote Org"
        remote.modified[.organization] = t1
        let merged = ContactMerge.merge(base: base, local: local, remote: remote)
        #expect(merged.name == "Local")
        #expect(merged.organization == "Remote Org")
    }

    @Test("changed on both sides: the newer edit wins; equal times pick the same value on both devices")
    func bothChanged() {
        let base = Contact(name: "Base", modified: t0)
        var a = base
        a.name = "A"
        a.modified[.name] = t2
        var b = base
        b.name = "B"
        b.modified[.name] = t1
        #expect(ContactMerge.merge(base: base, local: a, remote: b).name == "A")
        #expect(ContactMerge.merge(base: base, local: b, remote: a).name == "A")
        b.modified[.name] = t2
        #expect(
            ContactMerge.merge(base: base, local: a, remote: b).name
                == ContactMerge.merge(base: base, local: b, remote: a).name)
    }

    @Test("emails merge item by item: additions on both sides stay, a removal goes, an edit beats a removal")
    func listItems() {
        let keep = LabeledValue(id: "keep", label: "home", value: "keep@example.org", modified: t0)
        let drop = LabeledValue(id: "drop", label: "work", value: "drop@example.org", modified: t0)
        let edited = LabeledValue(id: "edited", label: "", value: "old@example.org", modified: t0)
        let base = Contact(name: "N", emails: [keep, drop, edited], modified: t0)
        var local = base
        local.emails.removeAll { $0.id == "drop" || $0.id == "edited" }
        local.emails.append(LabeledValue(id: "l", label: "", value: "local@example.org", modified: t1))
        var remote = base
        remote.emails[2].value = "new@example.org"
        remote.emails[2].modified = t1
        remote.emails.append(LabeledValue(id: "r", label: "", value: "remote@example.org", modified: t1))
        let merged = ContactMerge.merge(base: base, local: local, remote: remote)
        #expect(
            merged.emails.map(\.value) == [
                "keep@example.org", "new@example.org", "remote@example.org", "local@example.org",
            ])
    }
}
