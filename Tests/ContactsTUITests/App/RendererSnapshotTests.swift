import ContactsModel
import ContactsStore
import Foundation
import Terminal
import Testing

@testable import ContactsTUI

/// The screen as text, at the sizes people use and at the edges: what a user sees, checked line by line.
@Suite("Rendering: the screen as text")
struct RendererSnapshotTests {
    @Test("100×30: the list, the selected contact's details, the sync status, the event log and the key hints")
    func wide() {
        #expect(
            Renderer.render(Fixtures.state()).text
                == """
                ┌─ Contacts · 6 ───────────────────┐┌─ Ada Lovelace ───────────────────────────────────────────────┐
                │› Ada Lovelace                    ││ Email        work: ada@example.org                           │
                │  Alan Turing                     ││ Phone        mobile: +44 20 7946 0000                        │
                │  Grace Hopper                    ││ Organisation Analytical Engines                              │
                │  Zoë Ångström                    ││ Address      12 St James's Square, London                    │
                │  张伟                            ││ Birthday     10 December 1815                                │
                │  👩‍👩‍👧 Family                       ││ Groups       Mathematicians, Family                          │
                │                                  ││ Notes        Wrote the first program, for the Analytical En… │
                │                                  ││ Record       Contacts/00000000-0000-4000-8000-000000000001   │
                │                                  │└──────────────────────────────────────────────────────────────┘
                │                                  │┌─ Sync · device laptop ───────────────────────────────────────┐
                │                                  ││ State     ● idle                                             │
                │                                  ││ Pending   nothing to send                                    │
                │                                  ││ Next      idle                                               │
                │                                  ││ Last sync 22:12:51 (29 s ago)                                │
                │                                  ││ Push      connected                                          │
                │                                  ││ Account   ada on http://127.0.0.1:8080                       │
                │                                  ││                                                              │
                │                                  ││                                                              │
                │                                  │└──────────────────────────────────────────────────────────────┘
                │                                  │┌─ Events ───────────────────────────────────────────────── 3 ─┐
                │                                  ││ 22:12:50 fetching                                            │
                │                                  ││ 22:12:51 fetched 6 changes, 0 deletions (6 so far)           │
                │                                  ││ 22:12:51 fetch done                                          │
                │                                  ││                                                              │
                │                                  ││                                                              │
                │                                  ││                                                              │
                │                                  ││                                                              │
                └──────────────────────────────────┘└──────────────────────────────────────────────────────────────┘
                 a add  e edit  d delete  / search  B books  b back up  r refresh  ? help  q quit
                """
        )
    }

    @Test("40×12, the smallest screen laid out: one box, its panes stacked, the hints that matter most")
    func narrow() {
        #expect(
            Renderer.render(Fixtures.state(width: 40, height: 12)).text
                == """
                ┌─ Contacts ───────────────────── 1/6 ─┐
                │› Ada Lovelace                        │
                │  Alan Turing                         │
                │  Grace Hopper                        │
                ├─ Ada Lovelace ───────────────────────┤
                │ Email       work: ada@example.org    │
                │ Phone       mobile: +44 20 7946 0000 │
                ├─ Sync · device laptop ───────────────┤
                │ State     ● idle                     │
                │ Pending   nothing to send            │
                └──────────────────────────────────────┘
                 a add  e edit  ? help  q quit
                """
        )
    }

    @Test("39×11 is too small: a notice says so and how to fix it")
    func tooSmall() {
        #expect(
            Renderer.render(Fixtures.state(width: 39, height: 11)).text
                == """




                      Terminal too small: 39x11.
                        Make it at least 40x12,
                          or press q to quit.




                """
        )
    }

    @Test("in a locale that is not UTF-8, the same layout in ASCII")
    func ascii() {
        let text = Renderer.render(Fixtures.state(width: 40, height: 12, unicode: false)).text
        #expect(
            text
                == """
                +- Contacts --------------------- 1/6 -+
                |> Ada Lovelace                        |
                |  Alan Turing                         |
                |  Grace Hopper                        |
                +- Ada Lovelace -----------------------+
                | Email       work: ada@example.org    |
                | Phone       mobile: +44 20 7946 0000 |
                +- Sync - device laptop ---------------+
                | State     * idle                     |
                | Pending   nothing to send            |
                +--------------------------------------+
                 a add  e edit  ? help  q quit
                """
        )
    }

    @Test("the edit form after a refused save: the error under the fields, the field at fault focused")
    func formWithError() {
        var state = Fixtures.state(width: 60, height: 16)
        Fixtures.press([.character("e"), .tab, .control("u")] + Fixtures.typing("work: ada@") + [.enter], on: &state)
        #expect(
            Renderer.render(state).text
                == """
                ┌─ Edit contact · Ada Lovelace ───────────────────── 2/15 ─┐
                │   Name          Ada Lovelace                             │
                │ › Email         work: ada@                               │
                │   Email                                                  │
                │   Phone         mobile: +44 20 7946 0000                 │
                │   Phone                                                  │
                │   Organisation  Analytical Engines                       │
                │   Birthday      1815-12-10                               │
                │   Anniversary                                            │
                │   Groups        Mathematicians, Family                   │
                │   Street        12 St James's Square                     │
                │                                                          │
                │ ✖ 'ada@' is not an email address; use the form           │
                │ name@example.org                                         │
                └──────────────────────────────────────────────────────────┘
                 Tab next  Shift-Tab previous  Enter save  Esc cancel
                """
        )
    }

    @Test("the help overlay lists the key tables, scrollably")
    func help() {
        var state = Fixtures.state(width: 60, height: 16)
        state.handle(.character("?"))
        #expect(
            Renderer.render(state).text
                == """
                ┌─ Keys ───────────────────────────────────── 1-13 of 111 ─┐
                │ Contact list                                             │
                │ j ↓            next contact                              │
                │ k ↑            previous contact                          │
                │ PgDn           next page                                 │
                │ PgUp           previous page                             │
                │ g Home         first contact                             │
                │ G End          last contact                              │
                │ a              add a contact                             │
                │ e Enter        edit the selected contact                 │
                │ E              edit the selected contact in $EDITOR      │
                │ P              open the contact's photo                  │
                │                ($CONTACTS_PHOTO_VIEWER, else xdg-open),  │
                │                downloading it first                      │
                └──────────────────────────────────────────────────────────┘
                 Esc close  j scroll
                """
        )
    }

    @Test("CJK, emoji, combining marks and escapes are measured by display width: the border lines up")
    func wideCharactersLineUp() {
        var state = Fixtures.state(
            width: 80, height: 14,
            rows: [
                .init(id: Fixtures.id(1), name: "Ada Lovelace"),
                .init(id: Fixtures.id(2), name: "张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟"),
                .init(id: Fixtures.id(3), name: "Zoe\u{308} Ångström"),
                .init(id: Fixtures.id(4), name: "👩‍👩‍👧 Family 🇫🇷"),
                .init(id: Fixtures.id(5), name: "Eve\u{1B}[2J\u{07}"),
                .init(id: Fixtures.id(6), name: "김민준 ❤️ 1️⃣"),
            ])
        state.list.select(1, viewport: 10)
        let grid = Renderer.render(state)
        #expect(
            grid.text
                == """
                ┌─ Contacts · 6 ───────────┐┌─ 张伟张伟张伟张伟张伟张伟张伟张伟张伟张伟 ───────┐
                │  Ada Lovelace            ││ Loading…                                         │
                │› 张伟张伟张伟张伟张伟张 …││                                                  │
                │  Zoë Ångström            ││                                                  │
                │  👩‍👩‍👧 Family 🇫🇷            ││                                                  │
                │  Eve^[[2J^G              ││                                                  │
                │  김민준 ❤️ 1️⃣            ││                                                  │
                │                          ││                                                  │
                │                          │└──────────────────────────────────────────────────┘
                │                          │┌─ Sync · device laptop ───────────────────────────┐
                │                          ││ State     ● idle                                 │
                │                          ││ Pending   nothing to send                        │
                └──────────────────────────┘└──────────────────────────────────────────────────┘
                 a add  e edit  d delete  / search  b back up  r refresh  ? help  q quit
                """
        )
        // Every row of the list box ends at the same column, whatever its name holds.
        for row in 0..<13 {
            #expect(grid[row, 27].grapheme == (row == 0 ? "┐" : row == 12 ? "┘" : "│"), "row \(row)")
        }
    }
}
