import ContactsModel
import ContactsStore
import Foundation
import SyncTesting
import Testing

@testable import ContactsTUI

/// A search answers at once from the names the list holds, then from every field, which the store looks
/// through (the list keeps no other field).
@Suite("Searching every field through the store")
struct EveryFieldSearchTests {
    /// A store holding `contacts`, and a list read from it.
    private func withStore(_ contacts: [Contact], _ body: (ContactsReader, ContactList) throws -> Void) throws {
        let directory = URL(fileURLWithPath: TemporaryFiles.path("tui-search"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try ContactStore(path: directory.appendingPathComponent("store.sqlite").path)
        try store.saveLocal(contacts)
        try body(ContactsReader(store), ContactList(try store.listing()))
    }

    /// The list, searched as the app does: by name at once, then every field's matches from the store.
    private final class Searching {
        var list: ContactList
        let store: ContactsReader

        init(_ list: ContactList, _ store: ContactsReader) {
            self.list = list
            self.store = store
        }

        /// The names shown once every field's matches for `query` are in; a failure is the test's.
        func shown(_ query: String) -> [String] {
            list.search(query, viewport: 10)
            guard let whole = EveryFieldSearch(list) else {
                Issue.record("a search waits for every field's matches")
                return []
            }
            do {
                let positions = try whole.run(in: store, isCancelled: { false })
                list.showEveryField(positions ?? [], generation: whole.pending.generation, viewport: 10)
            } catch {
                Issue.record(error)
            }
            #expect(list.pendingSearch == nil)
            return (0..<list.count).map { list.row(at: $0).name }
        }
    }

    @Test("every word in any field or in its scope, case and accents aside; the book by its name")
    func everyField() throws {
        let contacts = [
            Contact(
                name: "Ada Lovelace", emails: [LabeledValue(label: "", value: "ada@example.org")],
                phones: [LabeledValue(label: "", value: "+44 20 7946 0000")], organization: "Analytical Engines",
                groups: ["Maths"]),
            Contact(name: "Zoë Ångström", notes: "met at the Lovelace lecture", groups: ["Family"]),
            Contact(name: "张伟", organization: "Maths Dept"), Contact(name: ""),
        ]
        try withStore(contacts) { store, list in
            let search = Searching(list, store)
            #expect(search.shown("LOVE") == ["Ada Lovelace", "Zoë Ångström"])
            #expect(search.shown("name:love") == ["Ada Lovelace"])
            #expect(search.shown("Ång") == ["Zoë Ångström"])
            #expect(search.shown("伟") == ["张伟"])
            #expect(search.shown("maths") == ["Ada Lovelace", "张伟"])
            #expect(search.shown("group:maths") == ["Ada Lovelace"])
            #expect(search.shown("org:maths") == ["张伟"])
            #expect(search.shown("email:example") == ["Ada Lovelace"])
            #expect(search.shown("tel:7946") == ["Ada Lovelace"])
            #expect(search.shown("79460000") == ["Ada Lovelace"])
            #expect(search.shown("book:contacts").count == 4)
            #expect(search.shown("book:work").isEmpty)
        }
    }

    @Test("the names' matches at once, best first; the other fields' after, between the names and the letters in order")
    func namesFirstThenEveryField() throws {
        let names = ["Zed Lovelace", "Ada Lovelace", "Lovelace Trust", "Marlove Inc", "Lily Oswald Vega"]
        try withStore(names.map { Contact(name: $0) } + [Contact(name: "Bob", notes: "met at the Lovelace lecture")]) {
            store, list in
            var byName = list
            byName.search("love", viewport: 10)
            let shown = (0..<byName.count).map { byName.row(at: $0).name }
            #expect(shown == ["Lovelace Trust", "Ada Lovelace", "Zed Lovelace", "Marlove Inc", "Lily Oswald Vega"])
            #expect(byName.pendingSearch != nil, "Bob's notes are not in the list")
            let search = Searching(list, store)
            #expect(
                search.shown("love") == [
                    "Lovelace Trust", "Ada Lovelace", "Zed Lovelace", "Marlove Inc", "Bob", "Lily Oswald Vega",
                ])
            #expect(search.shown("lovel") == ["Lovelace Trust", "Ada Lovelace", "Zed Lovelace", "Bob"])
            #expect(search.list.selected?.name == "Lovelace Trust", "the best match is selected")
            search.list.search("lovel ", viewport: 10)
            #expect(search.list.count == 4 && search.list.pendingSearch == nil, "the same words: the same matches")
        }
    }

    @Test(
        "matches for a search or a list that changed since are not shown; the contact selected when the list was read again is selected again"
    )
    func staleMatches() throws {
        let contacts = (1...40).map { Contact(name: String(format: "Person %02d", $0), notes: "lecture") }
        try withStore(contacts) { store, list in
            var list = list
            list.search("lecture", viewport: 10)
            #expect(list.count == 0, "no name has it")
            let first = try #require(EveryFieldSearch(list))
            list.search("lectures", viewport: 10)
            let positions = try #require(try first.run(in: store, isCancelled: { false }))
            list.showEveryField(positions, generation: first.pending.generation, viewport: 10)
            #expect(list.count == 0 && list.pendingSearch != nil, "the older search's matches are not shown")
            #expect(try first.run(in: store, isCancelled: { true }) == nil, "a cancelled search gives nothing")

            list.search("lecture", viewport: 10)
            let second = try #require(EveryFieldSearch(list))
            list.showEveryField(
                try #require(try second.run(in: store, isCancelled: { false })), generation: second.pending.generation,
                viewport: 10)
            #expect(list.count == 40)
            list.select(25, viewport: 10)
            let chosen = list.selected
            list.replaceRows(try store.listing(), selecting: chosen?.id, viewport: 10)
            #expect(list.pendingSearch != nil && list.selected == nil, "read again, the list searches again")
            let third = try #require(EveryFieldSearch(list))
            list.showEveryField(
                try #require(try third.run(in: store, isCancelled: { false })), generation: third.pending.generation,
                viewport: 10)
            #expect(list.count == 40 && list.selected == chosen, "the contact selected when the list was read again")
        }
    }

    @Test(
        "a list longer than a read of the store is read in steps, whole and in order, ties of one name across a step included, and searched whole"
    )
    func readInSteps() throws {
        // Runs of 1,000 equal names: a step ends inside one, and the next goes on after the last ID read.
        let count = ContactStore.readStep + 1_500
        let contacts = (0..<count).map { Contact(name: "Person \($0 / 1_000)", notes: $0 % 2 == 0 ? "even" : "odd") }
        let directory = URL(fileURLWithPath: TemporaryFiles.path("tui-steps"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try ContactStore(path: directory.appendingPathComponent("store.sqlite").path)
        for start in stride(from: 0, to: count, by: 5_000) {
            try store.saveLocal(Array(contacts[start..<min(count, start + 5_000)]))
        }
        let listing = try store.listing()
        #expect(listing.ids == (try store.summaries().map(\.id)), "the order of one read of the whole table")
        var list = ContactList(listing)
        list.search("even", viewport: 10)
        let whole = try #require(EveryFieldSearch(list))
        let positions = try #require(try whole.run(in: ContactsReader(store), isCancelled: { false }))
        #expect(positions.count == count / 2 && Set(positions).count == count / 2)
        #expect(try whole.run(in: ContactsReader(store), isCancelled: { true }) == nil)
    }
}
