import ContactsModel
import ContactsStore
import Foundation
import Testing

@testable import ContactsTUI

@Suite("The contact form")
struct EditFormTests {
    private func labels(_ form: EditForm) -> [String] { form.fields.map(\.slot.label) }

    @Test("a contact's fields, one line per email and phone, each list with a spare line to add one")
    func fields() {
        let form = EditForm(editing: Fixtures.ada)
        #expect(
            labels(form) == [
                "Name", "Email", "Email", "Phone", "Phone", "Organisation", "Birthday", "Anniversary", "Groups",
                "Street", "City", "Region", "Postal code", "Country", "Notes",
            ])
        #expect(
            form.fields.map(\.input.text).prefix(5) == [
                "Ada Lovelace", "work: ada@example.org", "", "mobile: +44 20 7946 0000", "",
            ])
    }

    @Test("Tab and Shift-Tab move between fields and wrap around")
    func tabbing() {
        var form = EditForm(editing: nil)
        form.focusPrevious()
        #expect(form.focusedField.slot == .notes)
        form.focusNext()
        #expect(form.focusedField.slot == .name)
        form.focusNext()
        #expect(form.focusedField.slot == .email(itemID: nil))
    }

    @Test("typing into a list's spare line adds another spare; an emptied line goes once left")
    func listsGrowAndShrink() throws {
        var form = EditForm(editing: nil)
        form.focusNext()
        for character in "ada@example.org" { form.type(character) }
        #expect(labels(form).prefix(4) == ["Name", "Email", "Email", "Phone"])
        form.focusNext()
        for character in "ada@work.example" { form.type(character) }
        #expect(labels(form).filter { $0 == "Email" }.count == 3)
        form.focusPrevious()
        form.apply(.deleteToStart)
        form.focusNext()
        #expect(labels(form).filter { $0 == "Email" }.count == 2, "the emptied first email went")
        #expect(form.focusedField.input.text == "ada@work.example")
        #expect(try form.contact().emails.map(\.value) == ["ada@work.example"])
    }

    @Test("an empty name is refused with the store's own message, on the name field")
    func emptyName() {
        var form = EditForm(editing: nil)
        form.focusNext()
        form.focusNext()
        #expect(form.submit() == nil)
        #expect(form.error == "the name is empty; give the contact a name")
        #expect(form.focusedField.slot == .name)
        form.type("A")
        #expect(form.error == nil, "editing clears the error")
    }

    @Test("an invalid email or phone is refused on its own line")
    func invalidItems() {
        var form = EditForm(editing: Fixtures.ada)
        // Phone: a new number on the spare phone line.
        while form.focusedField.slot != .phone(itemID: nil) { form.focusNext() }
        for character in "home: call me" { form.type(character) }
        form.focusNext()
        #expect(form.submit() == nil)
        #expect(form.error == ContactError.invalidPhone("call me").description)
        #expect(form.focusedField.input.text == "home: call me")

        var second = EditForm(editing: Fixtures.ada)
        second.focusNext()
        second.apply(.deleteWord)
        #expect(second.focusedField.input.text == "work: ")
        for character in "ada.example.org" { second.type(character) }
        second.focusNext()
        second.focusNext()
        #expect(second.submit() == nil)
        #expect(second.error == "'ada.example.org' is not an email address; use the form name@example.org")
        #expect(second.focusedField.slot == .email(itemID: "e1"))
    }

    @Test("a contact goes through the form unchanged, keeping its item IDs")
    func roundTrip() throws {
        var contact = Fixtures.ada
        contact.emails.append(LabeledValue(id: "e2", label: "", value: "odd:address@example.org"))
        contact.notes = "two\nlines"
        let form = EditForm(editing: contact)
        #expect(form.fields[2].input.text == ": odd:address@example.org")
        #expect(try form.contact().sameContent(as: contact))
        #expect(try form.contact().emails.map(\.id) == ["e1", "e2"])
    }

    @Test("label: value")
    func labelledValues() {
        #expect(LabeledValue.parse("work: ada@example.org") == ("work", "ada@example.org"))
        #expect(LabeledValue.parse(" ada@example.org ") == ("", "ada@example.org"))
        #expect(LabeledValue.parse("ada@example.org:x") == ("", "ada@example.org:x"), "no label has an @ sign")
        #expect(
            LabeledValue.parse("a:b@example.org") == ("a", "b@example.org"), "such an address needs a leading colon")
        #expect(LabeledValue.parse(": odd:x@example.org") == ("", "odd:x@example.org"))
        #expect(LabeledValue.parse("mobile:+1 555 0100") == ("mobile", "+1 555 0100"))
        #expect(LabeledValue(label: "", value: "x:y").labeledText == ": x:y")
    }

    @Test("saving an edit keeps what sync changed meanwhile in the fields the user did not touch")
    func changesOntoCurrent() throws {
        var form = EditForm(editing: Fixtures.ada)
        form.apply(.end)
        for character in " King" { form.type(character) }
        var current = Fixtures.ada
        current.organization = "Babbage & Co"
        current.phones = [LabeledValue(id: "p9", label: "home", value: "+44 1 2345")]
        let saved = current.applying(changesFrom: Fixtures.ada, to: try form.contact())
        #expect(saved.name == "Ada Lovelace King")
        #expect(saved.organization == "Babbage & Co")
        #expect(saved.phones.map(\.value) == ["+44 1 2345"])
    }
}

@Suite("Text fields")
struct TextFieldTests {
    @Test("editing keys move and delete by grapheme")
    func editing() {
        var field = TextField("张伟 Zoë")
        field.apply(.left)
        field.apply(.deleteBackward)
        #expect(field.text == "张伟 Zë")
        field.apply(.deleteWord)
        #expect(field.text == "张伟 ë")
        field.apply(.home)
        field.apply(.deleteForward)
        #expect(field.text == "伟 ë")
        field.apply(.end)
        field.insert("x")
        field.apply(.left)
        field.apply(.deleteToEnd)
        #expect(field.text == "伟 ë")
        field.apply(.deleteToStart)
        #expect(field.text.isEmpty && field.cursor == 0)
    }

    @Test("a combining mark typed after a letter joins it")
    func combiningMark() {
        var field = TextField("Zoe")
        field.insert("\u{308}")
        #expect(field.text == "Zoë")
        #expect(field.cursor == 3)
    }

    @Test("a long text scrolls to keep the cursor visible, by display width")
    func scrolling() {
        var field = TextField("张伟张伟张伟")
        #expect(field.visible(width: 6) == ("张伟", 4), "a third wide character would leave no column for the cursor")
        field.apply(.home)
        #expect(field.visible(width: 6) == ("张伟张", 0))
        #expect(TextField("abc").visible(width: 10) == ("abc", 3))
    }
}
