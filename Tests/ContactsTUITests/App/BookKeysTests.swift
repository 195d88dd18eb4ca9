import ContactsModel
import ContactsStore
import Foundation
import SyncCore
import Terminal
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

    private let friends = AddressBook(
        zoneID: RecordZone.ID(zoneName: "book-friends"), name: "Friends", access: .owner,
        participants: [
            ShareParticipant(
                userRecordName: "_ada", username: "ada", role: .owner, permission: .readWrite,
                acceptanceStatus: .accepted),
            ShareParticipant(
                userRecordName: "_tom", username: "tom", role: .privateUser, permission: .readOnly,
                acceptanceStatus: .pending),
        ])

    private func state() -> AppState {
        var state = Fixtures.state(rows: [
            ContactList.Row(name: "Alan Turing"), ContactList.Row(name: "Boss", book: work.zoneID),
            ContactList.Row(name: "Mum", book: family.zoneID),
        ])
        state.books = [AddressBook(zoneID: Contact.zoneID, name: "Contacts", access: .owner), family, work]
        return state
    }

    private func panelState() -> AppState {
        var state = state()
        state.books.insert(friends, at: 2)
        Fixtures.press([.character("B")], on: &state)
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

    @Test(
        "the books panel marks verified people, shows the selected book's safety numbers, and says KEY CHANGED for a verified key that changed; the status pane says it in the error colour"
    )
    func keyMarks() throws {
        var state = panelState()
        state.keys = KeyTrust(
            verified: ["_ada"], refused: ["_tom"],
            warnings: ["tom's account key CHANGED and you had verified the old one"],
            safetyNumbers: [
                "_ada": "04417 93026 51190 27745 60312 88514", "_tom": "11111 22222 33333 44444 55555 66666",
            ])
        state.books[1].participants = [
            ShareParticipant(
                userRecordName: "_ada", username: "ada", role: .owner, permission: .readWrite,
                acceptanceStatus: .accepted)
        ]
        let text = Renderer.render(state).text
        #expect(text.contains("ada's ✓, read-write"), "\(text)")
        #expect(text.contains("shared with tom KEY CHANGED (read-only) (invited)"), "\(text)")
        // Family (Ada's, verified) selected: her safety number, verified.
        Fixtures.press([.character("j")], on: &state)
        #expect(Renderer.render(state).text.contains("ada: 04417 93026 51190 27745 60312 88514 (verified)"))
        // Friends (own, shared with Tom): his key changed.
        Fixtures.press([.character("j")], on: &state)
        #expect(Renderer.render(state).text.contains("tom: KEY CHANGED since you verified it; verify again"))
        // The status pane, behind the panel, says it too.
        Fixtures.press([.escape], on: &state)
        let screen = Renderer.render(state).text
        #expect(screen.contains("Keys") && screen.contains("tom's account key CHANGED"), "\(screen)")
    }

    @Test("B lists the books with owner and access; n, r, s, S, u, A and x ask for what they need and become effects")
    func panelActions() {
        var state = panelState()
        let text = Renderer.render(state).text
        #expect(text.contains("┌─ Books"))
        #expect(text.contains("Contacts") && text.contains("yours (default)"))
        #expect(text.contains("ada's, read-write") && text.contains("ada's, read-only"))
        #expect(text.contains("shared with tom (read-only)"))

        #expect(
            Fixtures.press([.character("n")] + Fixtures.typing("Neighbours") + [.enter], on: &state)
                == .createBook("Neighbours"))
        // The default book is neither shared nor deleted; Family is Ada's, so Grace cannot share it.
        Fixtures.press([.character("s")], on: &state)
        #expect(panel(state).notice?.text == "The default book cannot be shared: press n to create one to share.")
        Fixtures.press([.character("x")], on: &state)
        #expect(panel(state).notice?.text == "The default book cannot be deleted.")
        Fixtures.press([.character("j"), .character("s")], on: &state)
        #expect(panel(state).notice?.text == "Family is ada's: only its owner shares it.")

        // Friends, one's own: share read-only, unshare, rename.
        Fixtures.press([.character("j")], on: &state)
        #expect(state.selectedBook(panel(state))?.name == "Friends")
        #expect(
            Fixtures.press([.character("S")] + Fixtures.typing("grace") + [.enter], on: &state)
                == .shareBook(friends.zoneID, account: "grace", readOnly: true))
        #expect(
            Fixtures.press([.character("u")] + Fixtures.typing("tom") + [.enter], on: &state)
                == .unshareBook(friends.zoneID, account: "tom"))
        #expect(
            Fixtures.press([.character("r"), .control("u")] + Fixtures.typing("Pals") + [.enter], on: &state)
                == .renameBook(friends.zoneID, "Pals"))
        // Esc backs out of a prompt, doing nothing; an empty prompt is refused.
        #expect(Fixtures.press([.character("s"), .escape], on: &state) == nil)
        #expect(panel(state).step == .choosing)
        #expect(Fixtures.press([.character("s"), .enter], on: &state) == nil)
        #expect(panel(state).notice?.isError == true)
        Fixtures.press([.escape], on: &state)

        // Work is shared with this account: x leaves it, after a yes; no keeps it.
        Fixtures.press([.character("j")], on: &state)
        #expect(Fixtures.press([.character("x"), .character("n")], on: &state) == nil)
        #expect(Renderer.render(state).text.contains("Nothing deleted."))
        Fixtures.press([.character("x")], on: &state)
        #expect(Renderer.render(state).text.contains("Leave Work?"))
        #expect(Fixtures.press([.character("y")], on: &state) == .removeBook(work.zoneID))

        // A accepts a pasted invitation.
        #expect(
            Fixtures.press([.character("A")] + Fixtures.typing("http://h/share/t#k") + [.enter], on: &state)
                == .acceptInvitation("http://h/share/t#k"))

        // Enter shows the selected book's contacts and closes the panel.
        Fixtures.press([.character("k"), .character("k"), .enter], on: &state)
        #expect(state.mode == .browsing && state.list.book == family.zoneID)
    }

    @Test("a share's outcome shows in the panel with the whole invitation, wrapped to fit, until it closes")
    func invitationShown() {
        var state = panelState()
        let invitation =
            "http://127.0.0.1:8080/share/" + String(repeating: "T", count: 22) + "#"
            + String(repeating: "K", count: 60)
        state.bookActionFinished(
            .init("Shared Friends with grace (read-write); give them the invitation below."), invitation: invitation)
        let text = Renderer.render(state).text
        #expect(text.contains("Shared Friends with grace"))
        #expect(text.contains("Invitation (copy it whole"))
        let shown = text.split(separator: "\n").filter {
            $0.contains("TTT") || $0.contains("KKK") || $0.contains("share/")
        }
        let joined = shown.map { line in
            line.split(separator: "│").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.last ?? ""
        }.joined()
        #expect(joined == invitation)
        Fixtures.press([.escape], on: &state)
        #expect(state.mode == .browsing)
    }

    private func panel(_ state: AppState) -> BooksPanel {
        guard case .books(let panel) = state.mode else {
            Issue.record("the books panel is not open: \(state.mode)")
            return BooksPanel()
        }
        return panel
    }
}
