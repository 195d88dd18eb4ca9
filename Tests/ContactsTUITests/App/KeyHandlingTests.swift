import ContactsModel
import ContactsStore
import Foundation
import Terminal
import Testing

@testable import ContactsTUI

/// Keys as a user presses them, and what each does to the state and asks of the device.
@Suite("Key handling")
struct KeyHandlingTests {
    @Test("j, k and the arrows move one contact, stopping at either end")
    func moveByOne() {
        var state = Fixtures.state()
        Fixtures.press([.character("j"), .down], on: &state)
        #expect(state.list.selected?.name == "Grace Hopper")
        Fixtures.press([.character("k")], on: &state)
        #expect(state.list.selected?.name == "Alan Turing")
        Fixtures.press([.up, .up, .up], on: &state)
        #expect(state.list.selection == 0)
        Fixtures.press(Array(repeating: .character("j"), count: 20), on: &state)
        #expect(state.list.selected?.name == "👩‍👩‍👧 Family")
    }

    @Test("g and G jump to the ends; PgDn and PgUp move a page and keep the selection on screen")
    func jumpAndPage() {
        var state = Fixtures.state(width: 100, height: 30, rows: Fixtures.manyRows(1000))
        let page = state.layout.listRows
        #expect(page == 27)
        Fixtures.press([.character("G")], on: &state)
        #expect(state.list.selected?.name == "Person 1000")
        #expect(state.list.scroll == 1000 - page)
        Fixtures.press([.character("g")], on: &state)
        #expect(state.list.selection == 0 && state.list.scroll == 0)
        Fixtures.press([.pageDown, .pageDown], on: &state)
        #expect(state.list.selection == 2 * page)
        #expect((state.list.scroll..<state.list.scroll + page).contains(state.list.selection))
        Fixtures.press([.pageUp], on: &state)
        #expect(state.list.selection == page)
        Fixtures.press([.end, .home], on: &state)
        #expect(state.list.selection == 0)
    }

    @Test("resizing keeps the selected contact in view")
    func resizeKeepsSelection() {
        var state = Fixtures.state(width: 100, height: 30, rows: Fixtures.manyRows(100))
        Fixtures.press(Array(repeating: .character("j"), count: 25), on: &state)
        state.resize(width: 40, height: 12)
        #expect(state.layout.listRows == 3)
        #expect((state.list.scroll..<state.list.scroll + 3).contains(25))
        #expect(Renderer.render(state).text.contains("› Person 0026"))
    }

    @Test("/ searches as you type, ignoring case and accents; Enter keeps the matches, Esc clears them")
    func incrementalSearch() {
        var state = Fixtures.state()
        Fixtures.press([.character("/")], on: &state)
        #expect(state.mode == .searching)
        Fixtures.press([.character("A")], on: &state)
        #expect(state.list.count == 5, "every name but 张伟 has an a")
        Fixtures.press(Fixtures.typing("NGS"), on: &state)
        #expect((0..<state.list.count).map { state.list.row(at: $0).name } == ["Zoë Ångström"])
        Fixtures.press([.backspace, .backspace, .backspace], on: &state)
        #expect(state.list.count == 5, "deleting widens the search again")
        Fixtures.press([.control("u")] + Fixtures.typing("张"), on: &state)
        #expect(state.list.selected?.name == "张伟")
        Fixtures.press([.enter], on: &state)
        #expect(state.mode == .browsing)
        #expect(state.list.count == 1, "Enter keeps the matches")
        #expect(Renderer.render(state).text.contains("/张 · 1 of 6"))
        Fixtures.press([.escape], on: &state)
        #expect(state.list.count == 6)
        #expect(state.list.selected?.name == "张伟", "clearing keeps the contact found selected")
    }

    @Test("j and q typed in the search are letters, not commands")
    func lettersInSearch() {
        var state = Fixtures.state()
        let effect = Fixtures.press([.character("/")] + Fixtures.typing("jq"), on: &state)
        #expect(effect == nil)
        #expect(state.searchInput.text == "jq")
        #expect(state.list.count == 0)
        #expect(Renderer.render(state).text.contains("No name contains jq."))
        Fixtures.press([.escape], on: &state)
        #expect(state.list.count == 6 && state.mode == .browsing)
    }

    @Test("a opens an empty form; Enter with a valid contact asks to add it")
    func add() {
        var state = Fixtures.state()
        Fixtures.press([.character("a")], on: &state)
        guard case .editing(let form) = state.mode else {
            Issue.record("no form")
            return
        }
        #expect(form.original == nil)
        let effect = Fixtures.press(
            Fixtures.typing("Grace Hopper") + [.tab] + Fixtures.typing("work: grace@example.org") + [.enter], on: &state
        )
        guard case .add(let contact, book: nil) = effect else {
            Issue.record("expected an add, got \(String(describing: effect))")
            return
        }
        #expect(contact.name == "Grace Hopper")
        #expect(contact.emails.map(\.label) == ["work"])
        #expect(contact.emails.map(\.value) == ["grace@example.org"])
    }

    @Test("Esc cancels the form, saving nothing")
    func cancelForm() {
        var state = Fixtures.state()
        let effect = Fixtures.press([.character("a")] + Fixtures.typing("Someone") + [.escape], on: &state)
        #expect(effect == nil)
        #expect(state.mode == .browsing)
        #expect(state.message?.text == "Nothing added.")
    }

    @Test("e and Enter edit the selected contact once its details are loaded")
    func edit() {
        var state = Fixtures.state()
        Fixtures.press([.character("e")], on: &state)
        guard case .editing(let form) = state.mode else {
            Issue.record("no form")
            return
        }
        #expect(form.original == Fixtures.ada)
        Fixtures.press([.escape, .character("j"), .enter], on: &state)
        #expect(state.mode == .browsing, "Alan Turing's details are not loaded in this state")
        #expect(state.message?.text == "Alan Turing is still loading; try again.")
    }

    @Test("saving an edit hands the form over, for the app to apply its changes to the stored contact")
    func saveEdit() throws {
        var state = Fixtures.state()
        let effect = Fixtures.press([.enter, .end] + Fixtures.typing(" King") + [.enter], on: &state)
        guard case .update(let form) = effect else {
            Issue.record("expected an update")
            return
        }
        #expect(try form.contact().name == "Ada Lovelace King")
    }

    @Test("the form refuses an invalid contact, says why, and stays open")
    func invalidForm() {
        var state = Fixtures.state()
        let effect = Fixtures.press([.character("a"), .enter], on: &state)
        #expect(effect == nil)
        guard case .editing(let form) = state.mode else {
            Issue.record("the form closed")
            return
        }
        #expect(form.error == ContactError.emptyName.description)
    }

    @Test("d asks first, and the answer defaults to no")
    func deleteDefaultsToNo() {
        for answer: Key in [.enter, .escape, .character("n"), .character("x"), .character("q")] {
            var state = Fixtures.state()
            Fixtures.press([.character("d")], on: &state)
            #expect(state.mode == .confirmingDelete(state.list.selected!))
            #expect(Fixtures.press([answer], on: &state) == nil, "\(answer) must not delete")
            #expect(state.mode == .browsing)
            #expect(state.message?.text == "Kept Ada Lovelace.")
        }
        var state = Fixtures.state()
        let effect = Fixtures.press([.character("d"), .character("y")], on: &state)
        #expect(effect == .delete(ContactList.Row(id: Fixtures.id(1), name: "Ada Lovelace")))
    }

    @Test("D asks to type local or server; anything else is refused, Esc cancels")
    func deleteData() {
        var state = Fixtures.state()
        #expect(Fixtures.press([.character("D")] + Fixtures.typing("yes") + [.enter], on: &state) == nil)
        guard case .deletingData(let prompt) = state.mode else {
            Issue.record("the prompt closed")
            return
        }
        #expect(prompt.error == "type local or server, then Enter; Esc cancels")
        #expect(Fixtures.press([.escape], on: &state) == nil)
        #expect(state.mode == .browsing)

        var local = Fixtures.state()
        #expect(Fixtures.press([.character("D")] + Fixtures.typing("local") + [.enter], on: &local) == .deleteLocalData)
        var server = Fixtures.state()
        #expect(
            Fixtures.press([.character("D")] + Fixtures.typing("Server") + [.enter], on: &server) == .deleteServerData)
    }

    @Test("b backs up, r refreshes, q and Ctrl-C quit; Ctrl-C quits from a form too, where q is a letter")
    func commands() {
        var state = Fixtures.state()
        #expect(state.handle(.character("b")) == .backUp)
        #expect(state.handle(.character("r")) == .refresh)
        #expect(state.handle(.character("q")) == .quit)
        #expect(state.handle(.control("c")) == .quit)
        Fixtures.press([.character("a")], on: &state)
        #expect(state.handle(.character("q")) == nil)
        #expect(state.handle(.control("c")) == .quit)
    }

    @Test("? shows the help, which scrolls within its lines and closes with Esc")
    func help() {
        var state = Fixtures.state(width: 60, height: 16)
        Fixtures.press([.character("?")], on: &state)
        #expect(state.mode == .help(scroll: 0))
        Fixtures.press([.character("j"), .down, .character("k")], on: &state)
        #expect(state.mode == .help(scroll: 1))
        Fixtures.press(Array(repeating: .pageDown, count: 20), on: &state)
        let overlay = HelpOverlay(layout: state.layout, unicode: true)
        #expect(state.mode == .help(scroll: overlay.maximumScroll))
        #expect(Renderer.render(state).text.contains("Ctrl-C         quit (changes are already saved on"))
        Fixtures.press([.escape], on: &state)
        #expect(state.mode == .browsing)
    }

    @Test("a key that does nothing says so, and points to the help")
    func unknownKey() {
        var state = Fixtures.state()
        #expect(state.handle(.character("z")) == nil)
        #expect(state.message?.text == "z does nothing here; press ? to see the keys.")
        #expect(Renderer.render(state).text.hasSuffix(" z does nothing here; press ? to see the keys."))
        state.handle(.character("j"))
        #expect(state.message == nil, "the next key clears it")
    }

    @Test("on an empty list, edit and delete explain themselves")
    func emptyList() {
        var state = Fixtures.state(rows: [])
        Fixtures.press([.character("e")], on: &state)
        #expect(state.message?.text == "There is no contact to edit; press a to add one.")
        Fixtures.press([.character("d")], on: &state)
        #expect(state.mode == .browsing)
        #expect(Renderer.render(state).text.contains("No contacts yet."))
    }

    @Test("M looks for the selected contact's duplicates, asks with it first, and merges only on y")
    func mergeDuplicates() throws {
        var state = Fixtures.state()
        let ada = try #require(state.list.selected)
        #expect(state.handle(.character("M")) == .findDuplicates(ada))
        state.duplicatesFound(nil, of: ada)
        #expect(state.message?.text == "No likely duplicates of Ada Lovelace (same email, phone or name) in its book.")
        let twin = Contact(name: "Lovelace, Ada")
        let group = DuplicateGroup(contacts: [twin, Fixtures.ada], reasons: ["same name"], book: Contact.zoneID)
        state.duplicatesFound(group, of: ada)
        guard case .confirmingMerge(let asked) = state.mode else {
            Issue.record("no question: \(state.mode)")
            return
        }
        #expect(asked.contacts.map(\.name) == ["Ada Lovelace", "Lovelace, Ada"], "the selected contact is kept")
        #expect(Renderer.render(state).text.contains("Merge Ada Lovelace with Lovelace, Ada?"))
        #expect(state.handle(.character("n")) == nil && state.mode == .browsing)
        #expect(state.message?.text == "Kept them apart; nothing changed.")
        state.duplicatesFound(group, of: ada)
        #expect(state.handle(.character("y")) == .merge(asked))
    }
}
