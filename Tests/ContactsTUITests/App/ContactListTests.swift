import Foundation
import Testing

@testable import ContactsTUI

@Suite("The contact list and its search")
struct ContactListTests {
    @Test("a search that extends the last one narrows its matches, with the same result as a fresh search")
    func narrowing() {
        let rows = (1...2000).map {
            ContactList.Row(id: Fixtures.id($0), name: ["Ada", "Adam", "Åda", "Bob"][$0 % 4] + " \($0)")
        }
        var narrowed = ContactList(rows: rows)
        for query in ["a", "ad", "ada", "ada ", "ada 1"] { narrowed.search(query, viewport: 10) }
        var fresh = ContactList(rows: rows)
        fresh.search("ada 1", viewport: 10)
        #expect(narrowed.count == fresh.count)
        #expect((0..<fresh.count).map { fresh.row(at: $0).id } == (0..<narrowed.count).map { narrowed.row(at: $0).id })
        #expect(fresh.count == 555, "Ada and Åda (accents folded) whose number starts with 1")
    }

    @Test("a new list keeps the search and the selected contact, or the position when it is gone")
    func replacing() {
        var list = ContactList(rows: Fixtures.rows)
        list.select(2, viewport: 5)
        let grace = list.selected!
        list.replaceRows([ContactList.Row(name: "Aaron")] + Fixtures.rows, selecting: grace.id, viewport: 5)
        #expect(list.selected == grace)
        list.replaceRows(Fixtures.rows.filter { $0 != grace }, selecting: grace.id, viewport: 5)
        #expect(list.selection == 3, "the same position")
        list.search("a", viewport: 5)
        list.replaceRows(Fixtures.rows, selecting: nil, viewport: 5)
        #expect(list.query == "a" && list.count == 5)
    }

    @Test("the search index finds substrings in UTF-8, folded")
    func index() {
        let index = SearchIndex(foldedNames: ["ada lovelace", "zoe angstrom", "张伟", ""])
        #expect(index.matches(SearchIndex.fold("LOVE")) == [0])
        #expect(index.matches(SearchIndex.fold("Ång")) == [1])
        #expect(index.matches(SearchIndex.fold("伟")) == [2])
        #expect(index.matches(SearchIndex.fold("e"), among: [1, 2]) == [1])
        #expect(index.matches([]) == [0, 1, 2, 3])
    }
}
