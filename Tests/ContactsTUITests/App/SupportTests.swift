import ContactsModel
import ContactsStore
import Foundation
import Terminal
import Testing

@testable import ContactsTUI

@Suite("Key tables, event log and formatting")
struct SupportTests {
    @Test("no key is bound twice in one table")
    func noDuplicateKeys() {
        func check<Command>(_ table: KeyTable<Command>) {
            let keys = table.bindings.flatMap(\.keys)
            #expect(Set(keys).count == keys.count, "\(table.title)")
        }
        check(KeyMap.browsing)
        check(KeyMap.searching)
        check(KeyMap.form)
        check(KeyMap.textEditing)
        check(KeyMap.help)
        check(KeyMap.confirmDelete)
        check(KeyMap.deleteDataPrompt)
        check(KeyMap.global)
    }

    @Test("the help is generated from the tables that handle the keys")
    func helpFromTables() {
        let sections = KeyMap.helpSections(unicode: true)
        #expect(sections.map(\.title).first == "Contact list")
        let browsing = sections[0].entries
        #expect(browsing.count == KeyMap.browsing.bindings.count)
        #expect(browsing.contains { $0.keys == "e Enter" && $0.help == "edit the selected contact" })
        #expect(KeyMap.helpSections(unicode: false)[0].entries[0].keys == "j Down")
        #expect(sections.contains { $0.entries.contains { $0.keys == "Ctrl-C" } })
    }

    @Test("the hint bar keeps the most important hints when narrow, in table order")
    func hints() {
        var grid = CellGrid(width: 40, height: 1)
        Renderer.drawHints(&grid, KeyMap.browsing.hints(unicode: true), in: grid.bounds)
        #expect(grid.text == " a add  e edit  ? help  q quit")
    }

    @Test("the event log keeps the newest entries, oldest first")
    func ringBuffer() {
        var log = EventLog(capacity: 3)
        for number in 1...5 { log.append(EventLog.Entry(date: Fixtures.now, text: "\(number)")) }
        #expect(log.entries.map(\.text) == ["3", "4", "5"])
        #expect(log.last(2).map(\.text) == ["4", "5"])
        #expect(log.count == 3)
        log.append(EventLog.Entry(date: Fixtures.now.addingTimeInterval(5), text: "5"))
        #expect(log.entries.map(\.text) == ["3", "4", "5"], "a repeat takes no new line")
        #expect(log.entries.last?.repeats == 2)
        #expect(log.entries.last?.date == Fixtures.now.addingTimeInterval(5))
    }

    @Test("counts, times and wrapping")
    func formatting() {
        #expect(TextFormatting.count(100_000) == "100,000")
        #expect(TextFormatting.count(999) == "999")
        #expect(TextFormatting.plural(1, "change") == "1 change")
        #expect(TextFormatting.time(Fixtures.now, now: Fixtures.now, timeZone: Fixtures.utc) == "22:13:20")
        #expect(
            TextFormatting.time(Fixtures.now.addingTimeInterval(-86_400), now: Fixtures.now, timeZone: Fixtures.utc)
                == "2023-11-13 22:13")
        #expect(TextFormatting.age(of: Fixtures.now.addingTimeInterval(-125), now: Fixtures.now) == "2 min ago")
        #expect(
            TextFormatting.wrap("张伟 张伟张伟 a", width: 5)
                == ["张伟", "张伟 ", "张伟", "a"].map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(TextFormatting.wrap("one two three", width: 7) == ["one two", "three"])
    }

    @Test("text from the server is shown, never interpreted: no control character reaches the grid")
    func hostileText() {
        let hostile = "Eve\u{1B}]0;pwned\u{07}\u{1B}[2J\u{9B}31m\u{202E}evil"
        var state = Fixtures.state(rows: [ContactList.Row(id: Fixtures.id(1), name: hostile)])
        state.details = Fixtures.ada
        state.details?.name = hostile
        state.details?.notes = hostile
        state.log.append(EventLog.Entry(date: Fixtures.now, text: hostile))
        state.status.manualFailure = SyncStatus.Failure(date: Fixtures.now, message: hostile)
        let text = Renderer.render(state).text
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        #expect(
            !text.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) })
        #expect(text.contains("Eve^[]0;pwned^G^[[2J<U+009B>31m<U+202E>evil"))
    }
}
