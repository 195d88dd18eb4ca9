import Terminal

/// Where each pane goes on a screen of a given size: a pure function of the size, so that a resize lays
/// everything out again and tests can check any size.
///
/// - 80 columns or more: the list on the left, full height; details, sync status and (with room) the event
///   log stacked on the right, each in its own box.
/// - 40 to 79 columns: one box, its panes one above the other, divided by titled lines; the event log only
///   when the terminal is tall.
/// - Less than 40×12: a "terminal too small" notice.
///
/// The bottom row is always the hint bar.
public struct Layout: Sendable, Equatable {
    /// The smallest screen the app lays out.
    public static let minimumWidth = 40
    public static let minimumHeight = 12
    /// From this width on, the list and the other panes sit side by side.
    public static let wideWidth = 80

    public enum Arrangement: Sendable, Equatable {
        case tooSmall, stacked, wide
    }

    /// A pane: where its title goes (a border row: row, first column, width) and its inside.
    public struct Pane: Sendable, Equatable {
        /// The border the title is written into.
        public var titleEdge: Rect
        /// Where the pane's content goes.
        public var content: Rect
    }

    /// A line across a box that separates two panes.
    public struct Divider: Sendable, Equatable {
        public var box: Rect
        public var row: Int
    }

    public let width: Int
    public let height: Int
    public let arrangement: Arrangement
    /// Everything above the hint bar.
    public let body: Rect
    /// The bottom row.
    public let hintBar: Rect
    /// The boxes to draw, and the dividers inside them.
    public let boxes: [Rect]
    public let dividers: [Divider]
    public let list: Pane
    public let details: Pane
    public let status: Pane
    /// Absent when there is no room for it.
    public let events: Pane?

    /// How many contacts the list shows at once.
    public var listRows: Int { list.content.height }

    /// The layout of a `width` × `height` screen.
    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        let screen = Rect(row: 0, column: 0, width: self.width, height: self.height)
        (body, hintBar) = screen.split(bottomHeight: 1)
        let empty = Pane(
            titleEdge: Rect(row: 0, column: 0, width: 0, height: 0),
            content: Rect(row: 0, column: 0, width: 0, height: 0))
        if width < Self.minimumWidth || height < Self.minimumHeight {
            arrangement = .tooSmall
            (boxes, dividers, list, details, status, events) = ([], [], empty, empty, empty, nil)
        } else if width >= Self.wideWidth {
            arrangement = .wide
            (boxes, dividers, list, details, status, events) = Self.wide(body)
        } else {
            arrangement = .stacked
            (boxes, dividers, list, details, status, events) = Self.stacked(body)
        }
    }

    private static func boxed(_ rect: Rect) -> Pane {
        Pane(
            titleEdge: Rect(row: rect.row, column: rect.column, width: rect.width, height: 1),
            content: rect.inset(by: 1))
    }

    private static func wide(_ body: Rect) -> ([Rect], [Divider], Pane, Pane, Pane, Pane?) {
        let listWidth = min(max(body.width * 36 / 100, 24), 44)
        let (left, right) = body.split(leftWidth: listWidth)
        let statusHeight = (body.height >= 28 ? 8 : body.height >= 22 ? 7 : body.height >= 16 ? 4 : 2) + 2
        let spare = body.height - statusHeight
        let detailsHeight = spare >= 14 ? (spare + 1) / 2 : spare
        let detailsBox = Rect(row: right.row, column: right.column, width: right.width, height: detailsHeight)
        let statusBox = Rect(row: detailsBox.endRow, column: right.column, width: right.width, height: statusHeight)
        let eventsBox =
            spare > detailsHeight
            ? Rect(row: statusBox.endRow, column: right.column, width: right.width, height: spare - detailsHeight)
            : nil
        let boxes = [left, detailsBox, statusBox] + (eventsBox.map { [$0] } ?? [])
        return (boxes, [], boxed(left), boxed(detailsBox), boxed(statusBox), eventsBox.map(boxed))
    }

    private static func stacked(_ body: Rect) -> ([Rect], [Divider], Pane, Pane, Pane, Pane?) {
        let inside = body.inset(by: 1)
        var statusLines = body.height >= 22 ? 7 : 2
        var detailsLines = body.height >= 22 ? 5 : 2
        let eventsLines = body.height >= 36 ? 6 : (body.height >= 30 ? 4 : 0)
        let sections = eventsLines > 0 ? 4 : 3
        var listLines = inside.height - (sections - 1) - statusLines - detailsLines - eventsLines
        while listLines < 3 && (detailsLines > 1 || statusLines > 1) {
            if detailsLines > 1 { detailsLines -= 1 } else { statusLines -= 1 }
            listLines += 1
        }
        var row = inside.row
        var dividers: [Divider] = []
        func section(_ lines: Int, first: Bool = false) -> Pane {
            let titleRow = first ? body.row : row
            if !first {
                dividers.append(Divider(box: body, row: row))
                row += 1
            }
            let content = Rect(row: row, column: inside.column, width: inside.width, height: lines)
            row += lines
            return Pane(
                titleEdge: Rect(row: titleRow, column: body.column, width: body.width, height: 1), content: content)
        }
        let list = section(listLines, first: true)
        let details = section(detailsLines)
        let status = section(statusLines)
        let events = eventsLines > 0 ? section(eventsLines) : nil
        return ([body], dividers, list, details, status, events)
    }
}
