import ContactsModel
import ContactsStore
import Foundation
import SyncTesting
import Terminal
import Testing

@testable import ContactsTUI

/// What the app reads from a real store, and what it writes in the event log when sync changes the list.
@Suite("Loading from the store")
struct LoadingTests {
    @Test("the first screen reads only the names it shows; the list says more are coming until they are read")
    func firstRowsThenTheRest() throws {
        let directory = URL(fileURLWithPath: TemporaryFiles.path("tui-load"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try ContactStore(path: directory.appendingPathComponent("store.sqlite").path)
        try store.saveLocal((1...12).map { Contact(name: String(format: "Person %02d", $0)) })

        var state = try AppState.loading(
            from: ContactsReader(store), width: 40, height: 12, deviceName: "laptop", unicode: true, firstRows: 5)
        #expect(
            (0..<state.list.rows.count).map(state.list.rows.name) == (1...5).map { String(format: "Person %02d", $0) })
        #expect(!state.list.isComplete)
        state.handle(.character("j"))
        #expect(Renderer.render(state).text.hasPrefix("┌─ Contacts ──────────────────── 2/5+ ─┐"))

        state.replaceRows(try store.listing())
        #expect(state.list.isComplete && state.list.count == 12)
        #expect(state.list.selected?.name == "Person 02", "the selection survives")
        #expect(Renderer.render(state).text.hasPrefix("┌─ Contacts ──────────────────── 2/12 ─┐"))
        #expect(try store.pendingCount() == 12)
    }

    @Test("the event log names what sync changed in the list, with record IDs, and sums up a large change")
    @MainActor
    func describeChanges() {
        let ada = ContactList.Row(id: Fixtures.id(1), name: "Ada Lovelace")
        let grace = ContactList.Row(id: Fixtures.id(2), name: "Grace Hopper")
        let alan = ContactList.Row(id: Fixtures.id(3), name: "Alan Turing")
        // Another sort key: the renamed contact has another place in the list.
        let renamed = ContactList.Row(id: grace.id, name: "Grace Brewster Hopper")
        #expect(
            ContactsApp.describeChanges(from: listing([ada, grace]), to: listing([alan, renamed])) == [
                "received Alan Turing (Contacts/00000000)",
                "renamed by sync: Grace Hopper → Grace Brewster Hopper (Contacts/00000000)",
                "removed by sync: Ada Lovelace (Contacts/00000000)",
            ])
        let many = listing(Fixtures.manyRows(10))
        #expect(
            ContactsApp.describeChanges(from: listing([]), to: many).last
                == "sync changed the list: 10 received, 0 renamed, 0 removed")
        #expect(ContactsApp.describeChanges(from: many, to: many).isEmpty)
        // The same sort key, another name.
        let shouted = ContactList.Row(id: grace.id, name: "GRACE HOPPER")
        #expect(
            ContactsApp.describeChanges(from: listing([ada, grace]), to: listing([ada, shouted])) == [
                "renamed by sync: Grace Hopper → GRACE HOPPER (Contacts/00000000)"
            ])
    }

    private func listing(_ rows: [ContactList.Row]) -> ContactListing {
        ContactList(rows: rows).rows
    }
}
