import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncCore
import Testing
import VCard

@Suite("Contacts: birthdays, anniversaries and groups")
struct DatesAndGroupsTests {
    @Test("dates as people type them and as vCards write them; anything else is refused with how to write one")
    func parsing() throws {
        let typed: [(String, ContactDate?)] = [
            ("1985-04-12", ContactDate(year: 1985, month: 4, day: 12)),
            ("04-12", ContactDate(year: nil, month: 4, day: 12)),
            ("--04-12", ContactDate(year: nil, month: 4, day: 12)),
            (" 2000-02-29 ", ContactDate(year: 2000, month: 2, day: 29)),
            ("02-29", ContactDate(year: nil, month: 2, day: 29)), ("1999-02-29", nil), ("1985-13-01", nil),
            ("1985-04-31", nil), ("12/04/1985", nil), ("April 12", nil), ("85-04-12", nil), ("", nil),
        ]
        for (text, expected) in typed { #expect(ContactDate(text) == expected, "\(text)") }
        let cards: [(String, ContactDate?)] = [
            ("19850412", ContactDate(year: 1985, month: 4, day: 12)),
            ("1985-04-12", ContactDate(year: 1985, month: 4, day: 12)),
            ("--0412", ContactDate(year: nil, month: 4, day: 12)),
            ("--04-12", ContactDate(year: nil, month: 4, day: 12)),
            ("19850412T101500Z", ContactDate(year: 1985, month: 4, day: 12)), ("circa 1800", nil), ("1985", nil),
            ("T1015", nil),
        ]
        for (text, expected) in cards { #expect(ContactDate(vCard: text) == expected, "\(text)") }
        #expect(ContactDate(vCard: "1604-04-12", omittedYear: 1604) == ContactDate(year: nil, month: 4, day: 12))
        #expect(throws: ContactError.invalidDate(field: "birthday", "12/04/1985")) {
            try ContactDate.typed("12/04/1985", field: "birthday")
        }
        #expect(try ContactDate.typed("  ", field: "birthday") == nil)
        let date = try #require(ContactDate(year: 1985, month: 4, day: 12))
        #expect(date.description == "1985-04-12" && ContactDate(date.description) == date)
        #expect([date.vCardValue(extended: false), date.vCardValue(extended: true)] == ["19850412", "1985-04-12"])
        #expect(ContactDate("04-12")?.vCardValue(extended: false) == "--0412")
        #expect(date.spelledOut == "12 April 1985" && ContactDate("04-12")?.spelledOut == "12 April")
    }

    @Test("the next time a day comes round, across the new year and on 29 February")
    func nextOccurrence() throws {
        let today = DateComponents(year: 2026, month: 12, day: 30)
        let birthday = try #require(ContactDate("1985-01-02"))
        let next = try #require(birthday.next(onOrAfter: today))
        #expect(next.date == ContactDate(year: 2027, month: 1, day: 2) && next.days == 3)
        #expect(birthday.years(on: next.date) == 42)
        #expect(ContactDate("12-30")?.next(onOrAfter: today)?.days == 0)
        let leap = try #require(ContactDate("2000-02-29"))
        #expect(leap.next(onOrAfter: DateComponents(year: 2027, month: 2, day: 1))?.date == ContactDate("2027-02-28"))
        #expect(leap.next(onOrAfter: DateComponents(year: 2028, month: 2, day: 1))?.date == ContactDate("2028-02-29"))
    }

    @Test(
        "vCard BDAY, ANNIVERSARY and CATEGORIES in the forms address books write, and back out",
        arguments: [VCard.Version.v3, .v4])
    func vCardMapping(version: VCard.Version) throws {
        let text = """
            BEGIN:VCARD\r
            VERSION:3.0\r
            FN:Ada Lovelace\r
            BDAY;X-APPLE-OMIT-YEAR=1604:1604-12-10\r
            X-ANNIVERSARY:1835-07-08\r
            CATEGORIES:Family,Maths\r
            CATEGORIES:Analytical\\, Engines,family\r
            END:VCARD\r

            """
        let ada = Contact(vCard: try #require(VCardParser.parse(text).cards.first))
        #expect(ada.birthday == ContactDate("12-10"))
        #expect(ada.anniversary == ContactDate("1835-07-08"))
        #expect(ada.groups == ["Family", "Maths", "Analytical, Engines"])
        #expect(ada.extras.isEmpty)
        let written = VCardSerializer.serialize(ada.vCard(version: version))
        let expectedLines =
            version == .v3
            ? ["BDAY:--12-10", "X-ANNIVERSARY:1835-07-08"] : ["BDAY:--1210", "ANNIVERSARY:18350708"]
        for line in expectedLines + ["CATEGORIES:Family,Maths,Analytical\\, Engines"] {
            #expect(written.contains(line + "\r\n"), "\(line) in \(written)")
        }
        let back = Contact(vCard: try #require(VCardParser.parse(written).cards.first))
        #expect([back.birthday, back.anniversary] == [ada.birthday, ada.anniversary] && back.groups == ada.groups)
        // A birthday that is not a date stays as it was, among the properties the app does not model.
        let text2 = "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Old\r\nBDAY;VALUE=text:circa 1800\r\nEND:VCARD\r\n"
        let old = Contact(vCard: try #require(VCardParser.parse(text2).cards.first))
        #expect(old.birthday == nil && old.extras == ["BDAY;VALUE=text:circa 1800"])
    }

    @Test("synced as lines an earlier version keeps among its unmodelled properties; its birthdays become birthdays")
    func earlierVersions() throws {
        var ada = Contact(name: "Ada", birthday: ContactDate("1815-12-10"), groups: ["Family"], extras: ["X-A:1"])
        ada.modified[.birthday] = Date(timeIntervalSince1970: 1_700_000_000)
        let record = ada.record(base: nil)
        #expect(try Contact(record: record) == ada)
        let bytes = try #require(record[encrypted: "contact"]?.bytesValue)
        #expect(bytes.first == 3, "still the format earlier versions read")
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("BDAY:18151210") && text.contains("CATEGORIES:Family") && text.contains("X-A:1"))

        // What an earlier version wrote for a card it imported with a birthday: the line among the extras.
        var earlier = Contact(name: "Grace", extras: ["BDAY:1906-12-09", "X-B:2"])
        earlier.modified.removeValue(forKey: .birthday)
        earlier.modified.removeValue(forKey: .groups)
        earlier.modified.removeValue(forKey: .anniversary)
        let read = try Contact(record: earlier.record(base: nil))
        #expect(read.birthday == ContactDate("1906-12-09") && read.extras == ["X-B:2"])
        #expect(read.modificationDate(of: .birthday) == earlier.modificationDate(of: .extras))
    }

    @Test("groups merge as a set: joined on either side stays, left on either side goes; dates merge as fields")
    func merge() throws {
        let base = Contact(name: "Ada", groups: ["Family", "Maths", "Work"], modified: Date(timeIntervalSince1970: 1))
        var local = base
        local.groups = ["Maths", "Work", "Climbing"]
        local.birthday = ContactDate("1815-12-10")
        local = local.stamped(against: base, at: Date(timeIntervalSince1970: 2))
        var remote = base
        remote.groups = ["Family", "Maths", "Chess"]
        remote = remote.stamped(against: base, at: Date(timeIntervalSince1970: 3))
        let merged = ContactMerge.merge(base: base, local: local, remote: remote)
        #expect(merged.groups == ["Maths", "Chess", "Climbing"])
        #expect(merged.birthday == ContactDate("1815-12-10"))
        #expect(ContactMerge.merge(base: base, local: remote, remote: local).groups.sorted() == merged.groups.sorted())
    }

    @Test("a birthday and groups set on one device reach the other; concurrent group edits both count")
    func sync() async throws {
        try await withContactsDevices { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.contacts.add(Contact(name: "Ada", birthday: ContactDate("1815-12-10"), groups: ["Family", "Maths"]))
            try await a.sync()
            try await b.sync()
            let onB = try b.contact(named: "Ada")
            #expect(onB.birthday == ContactDate("1815-12-10") && onB.groups == ["Family", "Maths"])
            try a.edit("Ada") { $0.groups.append("Climbing") }
            try b.edit("Ada") {
                $0.groups.removeAll { $0 == "Family" }
                $0.anniversary = ContactDate("1835-07-08")
            }
            try await a.sync()
            try await b.sync()
            try await a.sync()
            for device in [a, b] {
                let ada = try device.contact(named: "Ada")
                #expect(ada.groups == ["Maths", "Climbing"], "\(ada.groups)")
                #expect(ada.anniversary == ContactDate("1835-07-08"))
            }
            #expect(try b.store.groups().map(\.name) == ["Climbing", "Maths"])
            let upcoming = try b.store.upcomingDates(from: DateComponents(year: 2026, month: 12, day: 1), within: 9)
            #expect(upcoming.map(\.name) == ["Ada"] && upcoming.first?.years == 211 && upcoming.first?.days == 9)
        }
    }
}
