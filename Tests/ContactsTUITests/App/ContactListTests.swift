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

    @Test("new contacts above the selected one leave it where it was on screen, and the search as it was")
    func arrivingAbove() {
        var list = ContactList(rows: Fixtures.manyRows(100))
        list.select(50, viewport: 10)
        let selected = list.selected!
        let onScreen = list.selection - list.scroll
        let arrived = (1...30).map {
            ContactList.Row(id: Fixtures.id(1000 + $0), name: String(format: "Aaron %02d", $0))
        }
        list.replaceRows(arrived + Fixtures.manyRows(100), selecting: selected.id, viewport: 10)
        #expect(list.selected == selected && list.selection == 80)
        #expect(list.selection - list.scroll == onScreen, "the same row of the screen")
        list.search("person 00", viewport: 10)
        #expect(list.count == 100, "Person 0001 to Person 0100")
        list.move(by: 5, viewport: 10)
        let found = list.selected!
        list.replaceRows(Fixtures.manyRows(100) + arrived, selecting: found.id, viewport: 10)
        #expect(list.query == "person 00" && list.count == 100 && list.selected == found)
    }
}
