import ContactsModel
import Foundation
import Testing

@Suite("Contacts: the text file a contact is edited as in $EDITOR")
struct ContactTemplateTests {
    static let ada = Contact(
        name: "Ada Lovelace",
        emails: [
            LabeledValue(id: "e1", label: "work", value: "ada@example.org"),
            LabeledValue(id: "e2", label: "", value: "odd:ada@home.example"),
        ],
        phones: [LabeledValue(id: "p1", label: "mobile", value: "+44 20 7946 0000")],
        organization: "Analytical Engines",
        address: PostalAddress(street: "12 St James's Square\nFlat 2", city: "London"),
        notes: "Wrote the first program.\n\n  Indented, with a # inside.", birthday: ContactDate("1815-12-10"),
        groups: ["Family", "Maths"])

    @Test("a contact reads back from its file as it was, IDs and all")
    func roundTrip() throws {
        let text = ContactTemplate.text(for: Self.ada)
        #expect(
            text.contains("\nEmail: : odd:ada@home.example\n")
                && text.contains("\nNotes: Wrote the first program.\n  \n    Indented"))
        let back = try ContactTemplate.contact(from: text, original: Self.ada)
        #expect(back == Self.ada)
        // Editors that strip trailing spaces leave the empty line of the notes empty: still part of them.
        let stripped = text.replacingOccurrences(of: "\n  \n", with: "\n\n")
        #expect(try ContactTemplate.contact(from: stripped, original: Self.ada).notes == Self.ada.notes)
    }

    @Test("edits: a changed value keeps its item's ID, a new one gets one, a removed one goes; fields in any case")
    func edits() throws {
        let text = """
            name: Ada King
            EMAIL: home: ada@home.example
            Email: ada@king.example
            Phone:
            organization: Analytical Engines Ltd
            Birthday: 12-10
            Groups: Maths, maths, Climbing
            Notes: one
              two
            """
        let edited = try ContactTemplate.contact(from: text, original: Self.ada)
        #expect(edited.name == "Ada King" && edited.organization == "Analytical Engines Ltd")
        #expect(edited.emails.map(\.value) == ["ada@home.example", "ada@king.example"])
        #expect(edited.emails.map(\.id) == ["e1", "e2"], "edited in place, so the items keep their IDs")
        #expect(edited.phones.isEmpty && edited.birthday == ContactDate("12-10") && edited.anniversary == nil)
        #expect(edited.groups == ["Maths", "Climbing"] && edited.notes == "one\ntwo")
        #expect(edited.address == PostalAddress(), "fields left out are emptied")
    }

    @Test("problems: each with its line, put at the top of the file, and taken away when read again")
    func problems() throws {
        let text = """
            Name: Ada
            Nmae: Ada
            Email: ada@
            Birthday: 1815-13-10
              indented after Birthday
            no colon here
            Name: Twice
            """
        #expect {
            try ContactTemplate.contact(from: text, original: Self.ada)
        } throws: { error in
            guard let list = error as? ContactTemplate.ProblemList else { return false }
            let lines = list.problems.map(\.line)
            return lines == [2, 5, 6, 7, 4]
                && list.problems[0].message.hasPrefix("'Nmae' is not a field; the fields are Name,")
        }
        let valid = "Name: Ada\nEmail: ada@\n"
        do {
            _ = try ContactTemplate.contact(from: valid, original: Self.ada)
            Issue.record("an invalid email was taken")
        } catch {
            #expect(error.problems.map(\.line) == [2])
            let reopened = ContactTemplate.text(valid, with: error.problems)
            #expect(reopened.hasPrefix("# ✖ line 2: 'ada@' is not an email address"))
            let fixed = reopened.replacingOccurrences(of: "ada@\n", with: "ada@example.org\n")
            #expect(
                try ContactTemplate.contact(from: fixed, original: Self.ada).emails.map(\.value) == ["ada@example.org"])
            // Problems found again replace the old ones rather than piling up.
            let again = ContactTemplate.text(reopened, with: [ContactTemplate.Problem(line: 1, message: "x")])
            #expect(again.components(separatedBy: "# ✖").count == 2)
        }
        #expect(ContactTemplate.isEmpty("# only comments\n\n  \n") && !ContactTemplate.isEmpty("Name: x"))
    }
}
