import ContactsModel
import Testing

@Suite("Finding contacts: every word in any field or in its scope, case and accents aside, phone digits")
struct ContactSearchTests {
    private let lukasz = Contact(
        name: "Łukasz Nowak", emails: [LabeledValue(label: "", value: "lukasz@example.pl")],
        phones: [LabeledValue(label: "mobile", value: "+48 (22) 555-0199")], organization: "Firma Żółw",
        address: PostalAddress(street: "ul. Długa 5", city: "Gdańsk"), notes: "Plays the cello", groups: ["Orchestra"])

    @Test("letters of their own are typed as people type them: ł, ø, ß, æ")
    func ownLetters() throws {
        for (name, query) in [
            ("Łukasz", "lukasz"), ("Søren Kierkegaard", "soren"), ("Straße", "strasse"), ("Æsa", "aesa"),
        ] {
            #expect(try #require(ContactSearch(query)).matches(Contact(name: name)), "\(query) finds \(name)")
        }
    }

    @Test("each word must match some field: name, email, organisation, group, address, notes, phone digits")
    func words() throws {
        for query in [
            "lukasz", "NOWAK", "example.pl", "zolw", "łukasz firma", "5550199", "555 0199", "Lukasz", "cello",
            "orchestra", "gdansk dluga",
        ] {
            #expect(try #require(ContactSearch(query)).matches(lukasz), "\(query)")
        }
        for query in ["lukasz ada", "55", "example.org", "555-0199x", "viola"] {
            #expect(try #require(ContactSearch(query)).matches(lukasz) == false, "\(query)")
        }
        #expect(ContactSearch("   ") == nil)
        #expect(ContactSearch("email:") == nil, "a scope still being typed asks nothing yet")
    }

    @Test("a scope limits a word to one field: email, org, tel, group, book, name, note, address")
    func scopes() throws {
        let hits = [
            "email:example", "org:firma", "organisation:zolw", "tel:0199", "phone:+48", "group:orch", "name:nowak",
            "note:cello", "address:gdansk", "book:work", "Book:WORK email:lukasz",
        ]
        for query in hits {
            #expect(try #require(ContactSearch(query)).matches(lukasz, bookName: "Work"), "\(query)")
        }
        let misses = [
            "email:firma", "org:lukasz", "tel:999", "group:cello", "name:example", "book:home", "note:gdansk",
        ]
        for query in misses {
            #expect(try #require(ContactSearch(query)).matches(lukasz, bookName: "Work") == false, "\(query)")
        }
        #expect(try #require(ContactSearch("book:work")).matches(lukasz) == false, "no book named: no match")
        #expect(try #require(ContactSearch("http://x")).matches(Contact(name: "see http://x")), "not a scope")
    }

    @Test("a search narrows the last one only when each word grows in the same scope")
    func narrowing() throws {
        func narrows(_ new: String, _ old: String) throws -> Bool {
            try #require(ContactSearch(new)).narrows(#require(ContactSearch(old)))
        }
        #expect(try narrows("ada", "ad") && narrows("ada lo", "ada") && narrows("email:ada", "email:a"))
        #expect(try !narrows("ad", "ada") && !narrows("email:ada", "ada") && !narrows("ada", "email:ada"))
        #expect(try !narrows("5550", "555x") && narrows("5550", "555"))
    }
}
