import ContactsCore
import Testing

@Suite("Finding contacts: every word, case and accents aside, phone digits")
struct ContactSearchTests {
    private let lukasz = Contact(
        name: "Łukasz Nowak", emails: [LabeledValue(label: "", value: "lukasz@example.pl")],
        phones: [LabeledValue(label: "mobile", value: "+48 (22) 555-0199")], organization: "Firma Żółw")

    @Test("letters of their own are typed as people type them: ł, ø, ß, æ")
    func ownLetters() throws {
        for (name, query) in [
            ("Łukasz", "lukasz"), ("Søren Kierkegaard", "soren"), ("Straße", "strasse"), ("Æsa", "aesa"),
        ] {
            #expect(try #require(ContactSearch(query)).matches(Contact(name: name)), "\(query) finds \(name)")
        }
    }

    @Test("each word must match the name, an email, the organisation or the phone's digits")
    func words() throws {
        for query in ["lukasz", "NOWAK", "example.pl", "zolw", "łukasz firma", "5550199", "555 0199", "Lukasz"] {
            #expect(try #require(ContactSearch(query)).matches(lukasz), "\(query)")
        }
        for query in ["lukasz ada", "55", "example.org", "555-0199x"] {
            #expect(try #require(ContactSearch(query)).matches(lukasz) == false, "\(query)")
        }
        #expect(ContactSearch("   ") == nil)
    }
}
