import ContactsModel
import ContactsStore
import Foundation
import SyncCore
import Terminal
import Testing

@testable import ContactsTUI

/// The conflict log in the app: the status pane counts the values other edits overwrote, `C` lists them
/// with both sides, and one key puts the lost value back (or dismisses the entry), never in a book the
/// account may only read.
@Suite("Key handling: the conflict log")
struct ConflictsPanelTests {
    private let work = AddressBook(
        zoneID: RecordZone.ID(zoneName: "book-work", ownerName: "_grace"), name: "Work", access: .readOnly,
        ownerUsername: "grace")

    /// Two entries, newest first: Ada's organisation (the laptop's "Navy" lost to the phone's "Harvard"),
    /// then an email of the Boss in a read-only book.
    private var entries: [ContactConflict] {
        [
            ContactConflict(
                id: Fixtures.id(101), contactID: Fixtures.ada.id, zoneID: Contact.zoneID, contactName: "Ada Lovelace",
                field: .organization,
                kept: .init(value: .text("Harvard"), edited: Fixtures.now.addingTimeInterval(-60), device: "phone"),
                lost: .init(value: .text("Navy"), edited: Fixtures.now.addingTimeInterval(-120), device: "laptop"),
                date: Fixtures.now.addingTimeInterval(-10)),
            ContactConflict(
                id: Fixtures.id(102), contactID: Fixtures.id(7), zoneID: work.zoneID, contactName: "Boss",
                field: .emails,
                kept: .init(
                    value: .item(LabeledValue(id: "e1", label: "work", value: "boss@new.example")),
                    edited: Fixtures.now.addingTimeInterval(-3600), device: "grace-desk"),
                lost: .init(
                    value: .item(LabeledValue(id: "e1", label: "work", value: "boss@old.example")),
                    edited: Fixtures.now.addingTimeInterval(-7200), device: "grace-phone"),
                date: Fixtures.now.addingTimeInterval(-20)),
        ]
    }

    private func state(conflicts: [ContactConflict]? = nil) -> AppState {
        var state = Fixtures.state()
        state.books = [AddressBook(zoneID: Contact.zoneID, name: "Contacts", access: .owner), work]
        state.replaceConflicts(conflicts ?? entries)
        return state
    }

    @Test("the status pane counts the overwritten values only when there are some")
    func statusPaneCount() {
        let text = Renderer.render(state()).text
        #expect(text.contains("│ Conflicts 2 values overwritten: press C to review"), "\(text)")
        #expect(!Renderer.render(state(conflicts: [])).text.contains("Conflicts"))
    }

    @Test("C lists each entry with the value kept and the value lost, their devices and edit times")
    func panel() {
        var state = state()
        Fixtures.press([.character("C")], on: &state)
        let lines = Renderer.render(state).text.split(separator: "\n").map(String.init)
        func line(_ text: String) -> String? { lines.first { $0.contains(text) } }
        #expect(line("Conflicts: values another edit overwrote") != nil, "\(lines.joined(separator: "\n"))")
        #expect(line("› Ada Lovelace: organisation, 22:13:10") != nil)
        #expect(line("kept  Harvard  (phone, edited 22:12:20)") != nil)
        #expect(line("lost  Navy  (laptop, edited 22:11:20)") != nil)
        #expect(line("  Boss: email, 22:13:00") != nil)
        #expect(line("lost  work: boss@old.example  (grace-phone, edited 20:13:20)") != nil)
        #expect(line("r restore") != nil && line("x dismiss") != nil, "the hints")
    }

    @Test("r restores the selected entry and x dismisses it; j and k move between entries; q closes")
    func actions() {
        var state = state()
        Fixtures.press([.character("C")], on: &state)
        #expect(Fixtures.press([.character("r")], on: &state) == .restoreConflict(entries[0]))
        #expect(Fixtures.press([.character("x")], on: &state) == .dismissConflict(entries[0]))
        Fixtures.press([.character("j"), .character("j")], on: &state)
        guard case .conflicts(let panel) = state.mode else {
            Issue.record("the panel closed: \(state.mode)")
            return
        }
        #expect(panel.selection == 1, "j stops at the last entry")
        Fixtures.press([.character("k")], on: &state)
        #expect(Fixtures.press([.enter], on: &state) == .restoreConflict(entries[0]))
        Fixtures.press([.character("q")], on: &state)
        #expect(state.mode == .browsing)
    }

    @Test("in a read-only book, restoring and dismissing are refused with the reason; nothing reaches the device")
    func readOnlyRefused() {
        var state = state()
        Fixtures.press([.character("C"), .character("j")], on: &state)
        for key in ["r", "x"] {
            #expect(Fixtures.press([.character(Character(key))], on: &state) == nil)
            guard case .conflicts(let panel) = state.mode else {
                Issue.record("the panel closed: \(state.mode)")
                return
            }
            #expect(panel.notice?.isError == true)
            #expect(
                panel.notice?.text == "Work is shared with you read-only by grace: its contacts cannot be changed here."
            )
        }
    }

    @Test("an empty log says so, and r does nothing; a shorter log after a sync keeps the selection in range")
    func emptyAndShrinking() {
        var state = state(conflicts: [])
        Fixtures.press([.character("C")], on: &state)
        #expect(Renderer.render(state).text.contains("No conflicts: no edit has been overwritten by another device's."))
        #expect(Fixtures.press([.character("r")], on: &state) == nil)
        #expect(Renderer.render(state).text.contains("The log is empty: nothing to restore or dismiss."))

        state.replaceConflicts(entries)
        Fixtures.press([.character("j")], on: &state)
        state.replaceConflicts(Array(entries.prefix(1)))
        #expect(Fixtures.press([.character("r")], on: &state) == .restoreConflict(entries[0]))
    }

    @Test("the outcome of an action shows in the panel, or in the hint bar once the panel is closed")
    func outcome() {
        var state = state()
        Fixtures.press([.character("C")], on: &state)
        state.conflictActionFinished(AppState.Message("Put Navy back as Ada Lovelace's organisation."))
        #expect(Renderer.render(state).text.contains("Put Navy back as Ada Lovelace's organisation."))
        Fixtures.press([.escape], on: &state)
        state.conflictActionFinished(AppState.Message("Dismissed."))
        #expect(state.message?.text == "Dismissed.")
    }
}
