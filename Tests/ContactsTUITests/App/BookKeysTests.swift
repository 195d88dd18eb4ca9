import ContactsCore
import Foundation
import SyncCore
import Testing

@testable import ContactsTUI

/// Books in the TUI: `f` shows one book at a time, each row says its book, and a read-only book refuses
/// edits before any reach the device.
@Suite("Key handling: address books")
struct BookKeysTests {
    private let family = AddressBook(
        zoneID: RecordZone.ID(zoneName: "book-family", ownerName: "_ada"), name: "Family", access: .readWrite,
        ownerUsername: "ada")
    private let work = AddressBook(
        zoneID: RecordZone.ID(zoneName: "book-work", ownerName: "_ada"), name: "Work", access: .readOnly,
        ownerUsername: "ada")

    private func state() -> AppState {
        var state = Fixtures.state(rows: [
            ContactList.Row(name: "Alan Turing"), ContactList.Row(name: "Boss", book: work.zoneID),
            ContactList.Row(name: "Mum", book: family.zoneID),
        ])
        state.books = [AddressBook(zoneID: Contact.zoneID, name: "Contacts", access: .owner), family, work]
        return state
    }

    @Test("f shows each book alone in turn, then every book; a search narrows within the book")
    func filterByBook() {
        var state = state()
        Fixtures.press([.character("f")], on: &state)
        #expect(state.list.book == Contact.zoneID)
        #expect(state.list.count == 1 && state.list.selected?.name == "Alan Turing")
        Fixtures.press([.character("f")], on: &state)
        #expect(state.list.selected?.name == "Mum" && state.list.count == 1)
        #expect(Renderer.render(state).text.contains("Book Family · 1 of 3"))
        Fixtures.press([.character("/")] + Fixtures.typing("bo") + [.enter], on: &state)
        #expect(state.list.count == 0, "Boss is in Work, not Family")
        Fixtures.press([.escape, .character("f")], on: &state)
        #expect(state.list.selected?.name == "Boss")
        Fixtures.press([.character("f")], on: &state)
        #expect(state.list.book == nil && state.list.count == 3)
        #expect(state.message?.text == "Showing every book.")
    }

    @Test("each row outside the default book shows its book's name")
    func rowsShowTheirBook() {
        let text = Renderer.render(state()).text
        let lines = text.split(separator: "\n")
        #expect(lines.contains { $0.contains("Boss") && $0.contains("Work") })
        #expect(lines.contains { $0.contains("Mum") && $0.contains("Family") })
        #expect(!lines.contains { $0.contains("Alan Turing") && $0.contains("Contacts │") })
    }

    @Test(
        "in a read-only book, e, d and a (with the book shown) are refused with the reason; nothing is asked of the device"
    )
    func readOnlyRefused() {
        var state = state()
        Fixtures.press([.character("j")], on: &state)
        #expect(state.list.selected?.name == "Boss")
        for key in ["e", "d"] {
            let effect = Fixtures.press([.character(Character(key))], on: &state)
            #expect(effect == nil)
            #expect(state.mode == .browsing)
            #expect(state.message?.isError == true)
            #expect(
                state.message?.text == "Work is shared with you read-only by ada: its contacts cannot be changed here.")
        }
        Fixtures.press([.character("f"), .character("f"), .character("f")], on: &state)
        #expect(state.list.book == work.zoneID)
        #expect(Fixtures.press([.character("a")], on: &state) == nil)
        #expect(state.mode == .browsing && state.message?.isError == true)

        // Family is read-write: a new contact goes into it.
        Fixtures.press([.character("f"), .character("f"), .character("f")], on: &state)
        #expect(state.list.book == family.zoneID)
        let effect = Fixtures.press([.character("a")] + Fixtures.typing("Cousin") + [.enter], on: &state)
        guard case .add(let contact, let book) = effect else {
            Issue.record("expected an add, got \(String(describing: effect))")
            return
        }
        #expect(contact.name == "Cousin" && book == family.zoneID)
    }
}
