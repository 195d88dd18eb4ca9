import ContactsModel
import ContactsStore
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
        let expected = rows.filter { $0.sortKey.contains("ada") && $0.sortKey.split(separator: " ")[1].contains("1") }
        #expect(fresh.count == expected.count, "Ada, Adam and Åda (accents folded) with a 1 in their number")
    }

    @Test(
        "a narrowing search lists equal matches in list order, as a fresh one does, though the last search ranked them otherwise",
        arguments: [0, 100])
    func narrowingKeepsListOrder(others: Int) {
        // "ad" ranks Ada Bob (the name starts with it) before Bob Ada; "ad b" ranks the two the same.
        let rows =
            [ContactList.Row(name: "Bob Ada"), ContactList.Row(name: "Ada Bob")]
            + (0..<others).map { ContactList.Row(name: "Zed \($0)") }
        var list = ContactList(rows: rows)
        list.search("ad", viewport: 10)
        #expect((0..<list.count).map { list.row(at: $0).name } == ["Ada Bob", "Bob Ada"])
        list.search("ad b", viewport: 10)
        #expect((0..<list.count).map { list.row(at: $0).name } == ["Bob Ada", "Ada Bob"])
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

    @Test("the search index finds every word in any field, or in its scope, folded")
    func index() throws {
        let contacts = [
            Contact(
                name: "Ada Lovelace", emails: [LabeledValue(label: "", value: "ada@example.org")],
                phones: [LabeledValue(label: "", value: "+44 20 7946 0000")], organization: "Analytical Engines",
                groups: ["Maths"]),
            Contact(name: "Zoë Ångström", notes: "met at the Lovelace lecture", groups: ["Family"]),
            Contact(name: "张伟", organization: "Maths Dept"), Contact(name: ""),
        ]
        let index = SearchIndex(texts: contacts.map(\.searchText))
        func find(_ query: String, among: [Int]? = nil) throws -> [Int] {
            try index.matches(#require(ContactSearch(query)), among: among, bookName: { $0 == 2 ? "Work" : nil })
        }
        #expect(try find("LOVE") == [0, 1])
        #expect(try find("name:love") == [0])
        #expect(try find("Ång") == [1])
        #expect(try find("伟") == [2])
        #expect(try find("maths") == [0, 2])
        #expect(try find("group:maths") == [0])
        #expect(try find("org:maths") == [2])
        #expect(try find("email:example") == [0])
        #expect(try find("tel:7946") == [0] && find("79460000") == [0] && find("794") == [0])
        #expect(try find("book:work") == [2])
        #expect(try find("zo", among: [1, 2]) == [1])
    }

    @Test("the best matches come first: the name's start, then a word's start, inside, other fields, letters in order")
    func ranking() {
        let names = ["Zed Lovelace", "Ada Lovelace", "Lovelace Trust", "Marlove Inc", "Lily Oswald Vega", "Bob"]
        var rows = names.enumerated().map { ContactList.Row(id: Fixtures.id($0.offset + 1), name: $0.element) }
        rows[5].searchText = Contact(id: rows[5].id, name: "Bob", notes: "met at the Lovelace lecture").searchText
        var list = ContactList(rows: rows)
        list.search("love", viewport: 10)
        let shown = { (list: ContactList) in (0..<list.count).map { list.row(at: $0).name } }
        #expect(
            shown(list) == ["Lovelace Trust", "Zed Lovelace", "Ada Lovelace", "Marlove Inc", "Bob", "Lily Oswald Vega"])
        list.search("lovel", viewport: 10)
        #expect(shown(list) == ["Lovelace Trust", "Zed Lovelace", "Ada Lovelace", "Bob"])
        #expect(list.selected?.name == "Lovelace Trust", "the best match is selected")
    }
}
