import Terminal
import Testing

@testable import ContactsTUI

@Suite("Layout at every size")
struct LayoutTests {
    @Test("from 40×12 to 160×60, panes stay inside the screen, never overlap, and the list shows 3 rows or more")
    func everySize() {
        var problems: [String] = []
        for width in 40...160 {
            for height in 12...60 {
                let layout = Layout(width: width, height: height)
                let panes = [layout.list, layout.details, layout.status] + (layout.events.map { [$0] } ?? [])
                let inside = panes.allSatisfy {
                    $0.content.intersection(layout.body) == $0.content && $0.content.height >= 1
                }
                let apart = panes.indices.allSatisfy { index in
                    panes[(index + 1)...].allSatisfy { panes[index].content.intersection($0.content).isEmpty }
                }
                if !inside || !apart || layout.listRows < 3 || layout.arrangement != (width >= 80 ? .wide : .stacked) {
                    problems.append("\(width)x\(height)")
                }
            }
        }
        #expect(problems.isEmpty)
    }

    @Test("below 40×12 nothing is laid out")
    func tooSmall() {
        #expect(Layout(width: 39, height: 30).arrangement == .tooSmall)
        #expect(Layout(width: 100, height: 11).arrangement == .tooSmall)
        #expect(Layout(width: 0, height: 0).arrangement == .tooSmall)
        #expect(Renderer.render(AppState(width: 5, height: 2)).text == "Term…\nMake…")
    }

    @Test("every size renders without a crash, the smallest ones included")
    func renderEverySize() {
        for width in stride(from: 0, through: 90, by: 3) {
            for height in stride(from: 0, through: 26, by: 2) {
                var state = Fixtures.state(width: width, height: height)
                _ = Renderer.render(state)
                for key: Key in [.character("a"), .escape, .character("?"), .escape, .character("d"), .escape] {
                    state.handle(key)
                    _ = Renderer.render(state)
                }
            }
        }
    }
}
