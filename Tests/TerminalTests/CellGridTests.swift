import Testing

@testable import Terminal

@Suite("Cell grid: what a screen renders, read back as text")
struct CellGridTests {
    @Test("text is clipped at the grid's right edge")
    func clippedAtEdge() {
        var grid = CellGrid(width: 5, height: 1)
        #expect(grid.put("Grace Hopper", row: 0, column: 0) == 5)
        #expect(grid.text == "Grace")
        #expect(grid.put("Ada", row: 0, column: 9) == 0)
        #expect(grid.put("Ada", row: 3, column: 0) == 0)
        #expect(grid.text == "Grace")
    }

    @Test("a wide character that would straddle the last column becomes a space")
    func wideCharacterAtLastColumn() {
        var grid = CellGrid(width: 5, height: 1)
        #expect(grid.put("ab张伟", row: 0, column: 0) == 5)
        #expect(grid.text == "ab张")
        #expect(grid[0, 2].grapheme == "张")
        #expect(grid[0, 3].isContinuation)
        #expect(grid[0, 4] == Cell.blank)
    }

    @Test("maxWidth clips a field like the grid's edge, and leaves the next column alone")
    func maxWidth() {
        var grid = CellGrid(width: 8, height: 1)
        grid.put("xxxxxxxx", row: 0, column: 0)
        #expect(grid.put("张伟", row: 0, column: 1, maxWidth: 3) == 3)
        #expect(grid.text == "x张 xxxx")
        #expect(grid.put("Zoe\u{308}", row: 0, column: 5, maxWidth: 0) == 0)
        #expect(grid.text == "x张 xxxx")
    }

    @Test("text starting left of the grid shows only its visible part")
    func negativeColumn() {
        var grid = CellGrid(width: 6, height: 1)
        #expect(grid.put("张伟ab", row: 0, column: -1) == 5)
        #expect(grid.text == " 伟ab")
        #expect(grid.put("Grace", row: 0, column: -9) == 0)
    }

    @Test("writing over half of a wide character blanks its other half")
    func overwritingHalfAWideCharacter() {
        var grid = CellGrid(width: 6, height: 1)
        grid.put("张伟", row: 0, column: 0)
        grid.put("a", row: 0, column: 1)
        #expect(grid.text == " a伟")
        grid.put("b", row: 0, column: 2)
        #expect(grid.text == " ab")
        #expect(grid[0, 3] == Cell.blank)

        grid.put("张伟", row: 0, column: 0)
        grid.put("中", row: 0, column: 1)
        #expect(grid.text == " 中")
        #expect(grid[0, 0] == Cell.blank)
        #expect(grid[0, 2].isContinuation)
        #expect(grid[0, 3] == Cell.blank)
    }

    @Test("names in different scripts padded to one width line up the next column")
    func cjkColumnAlignment() {
        let contacts = [
            ("张伟", "555-0100"), ("Grace Hopper", "555-0101"), ("김민준", "555-0102"), ("Zoe\u{308}", "555-0103"),
        ]
        var grid = CellGrid(width: 20, height: contacts.count)
        for (row, (name, phone)) in contacts.enumerated() {
            let used = grid.put(name.truncated(toWidth: 8).padded(toWidth: 8), row: row, column: 0)
            #expect(used == 8)
            grid.put("│" + phone, row: row, column: used)
        }
        #expect(
            grid.text == """
                张伟    │555-0100
                Grace H…│555-0101
                김민준  │555-0102
                Zoë     │555-0103
                """
        )
        for row in 0..<grid.height {
            #expect(grid[row, 8].grapheme == "│")
        }
    }

    @Test("a box with a title, in Unicode lines")
    func unicodeBox() {
        var grid = CellGrid(width: 16, height: 5)
        grid.drawBox(grid.bounds, title: "Contacts")
        grid.drawDivider(grid.bounds, row: 2)
        #expect(
            grid.text == """
                ┌─ Contacts ───┐
                │              │
                ├──────────────┤
                │              │
                └──────────────┘
                """
        )
    }

    @Test("a box in ASCII, for a terminal without UTF-8, with a title too long for it")
    func asciiBox() {
        var grid = CellGrid(width: 12, height: 3)
        grid.drawBox(grid.bounds, title: "All Contacts", borders: .ascii)
        #expect(
            grid.text == """
                +- All C… -+
                |          |
                +----------+
                """
        )
    }

    @Test("a box larger than the grid is clipped, and a box too small is not drawn")
    func boxClippingAndDegenerate() {
        var grid = CellGrid(width: 6, height: 3)
        grid.drawBox(Rect(row: 1, column: 2, width: 10, height: 10))
        #expect(grid.text == "\n  ┌───\n  │")
        var tiny = CellGrid(width: 4, height: 2)
        tiny.drawBox(Rect(row: 0, column: 0, width: 1, height: 2))
        #expect(tiny.text == "\n")
    }

    @Test("the text has one line per row, without trailing spaces")
    func textOutput() {
        var grid = CellGrid(width: 4, height: 3)
        grid.put("a", row: 0, column: 0)
        grid.put("b  ", row: 2, column: 1)
        #expect(grid.text == "a\n\n b")
        #expect(grid.text(ofRow: 2) == " b")
    }

    @Test("fill and restyle change styles; fill blanks the text, restyle keeps it")
    func fillAndRestyle() {
        var grid = CellGrid(width: 6, height: 2)
        grid.put("Grace", row: 0, column: 0)
        let selection = CellStyle(color: .accent, reverse: true)
        grid.restyle(Rect(row: 0, column: 0, width: 6, height: 1), style: selection)
        #expect(grid.text == "Grace\n")
        #expect(grid[0, 5].style == selection)
        grid.fill(Rect(row: 0, column: 2, width: 10, height: 10), style: CellStyle(color: .muted))
        #expect(grid.text == "Gr\n")
        #expect(grid[1, 5].style.color == .muted)
        #expect(grid[0, 0].style == selection)
    }

    @Test("writing the same content twice gives equal grids; a change makes them differ")
    func equality() {
        var first = CellGrid(width: 5, height: 2)
        var second = CellGrid(width: 5, height: 2)
        first.put("张伟", row: 0, column: 0)
        second.put("张伟", row: 0, column: 0)
        #expect(first == second)
        second.put("x", row: 1, column: 0, style: CellStyle(bold: true))
        #expect(first != second)
    }

    @Test("a lone combining mark and a zero-width space take no cell")
    func zeroWidthGraphemes() {
        var grid = CellGrid(width: 5, height: 1)
        #expect(grid.put("\u{301}a\u{200B}b", row: 0, column: 0) == 2)
        #expect(grid.text == "ab")
    }
}

@Suite("Rect: laying out panes")
struct RectTests {
    let screen = Rect(row: 0, column: 0, width: 80, height: 24)

    @Test("a list pane and a detail pane side by side, above a status line")
    func layout() {
        let (body, status) = screen.split(bottomHeight: 1)
        #expect(status == Rect(row: 23, column: 0, width: 80, height: 1))
        let (list, detail) = body.split(leftWidth: 30)
        #expect(list == Rect(row: 0, column: 0, width: 30, height: 23))
        #expect(detail == Rect(row: 0, column: 30, width: 50, height: 23))
        #expect(body.split(rightWidth: 50) == (list, detail))
        let (header, rest) = detail.split(topHeight: 3)
        #expect(header.endRow == rest.row)
        #expect(list.inset(by: 1) == Rect(row: 1, column: 1, width: 28, height: 21))
    }

    @Test("splits and insets larger than the rectangle clamp instead of going negative")
    func clamping() {
        let small = Rect(row: 2, column: 2, width: 3, height: 2)
        #expect(small.split(leftWidth: 10).right.width == 0)
        #expect(small.split(topHeight: -4).top.height == 0)
        #expect(small.inset(by: 5).isEmpty)
        #expect(Rect(row: 0, column: 0, width: -3, height: 2).width == 0)
    }

    @Test("intersection keeps only the shared cells")
    func intersection() {
        let box = Rect(row: 20, column: 70, width: 20, height: 10)
        #expect(box.intersection(screen) == Rect(row: 20, column: 70, width: 10, height: 4))
        #expect(Rect(row: 30, column: 0, width: 5, height: 5).intersection(screen).isEmpty)
        #expect(screen.contains(row: 23, column: 79))
        #expect(!screen.contains(row: 24, column: 0))
    }
}
