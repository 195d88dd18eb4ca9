/// The parser's state: reads logical lines into cards and problems (see ``VCardParser``).
struct VCardReader {
    private(set) var result = VCardParseResult(cards: [], cardLines: [], problems: [])
    private var lines: LineReader
    /// A run of text outside any card, reported once when it ends.
    private var strayText: (first: LineReader.Line, count: Int)?

    init(lines: LineReader) {
        self.lines = lines
    }

    /// The `BEGIN:VCARD` line of the card to read next, when a card that did not end found it.
    private var pendingBegin: Int?

    /// How much of the input has been read, in bytes.
    var bytesRead: Int { lines.bytesRead }
    /// The number of the physical line after those read so far.
    var nextLineNumber: Int { lines.nextLineNumber }

    mutating func readAll() {
        while let (card, line) = nextCard() {
            result.cards.append(card)
            result.cardLines.append(line)
        }
    }

    /// The next valid card and the line of its `BEGIN:VCARD`, or nil at the end of the input. Problems
    /// met on the way are added to `result.problems`.
    mutating func nextCard() -> (card: VCard, line: Int)? {
        while true {
            if let begin = pendingBegin {
                pendingBegin = nil
                switch readCard(begunAt: begin) {
                case .card(let card): return (card, begin)
                case .nextBegins(let line): pendingBegin = line
                case .skipped: break
                }
                continue
            }
            guard let line = lines.next() else {
                reportStrayText()
                return nil
            }
            if line.isBlank {
                reportStrayText()
            } else if line.isBegin {
                reportStrayText()
                pendingBegin = line.number
            } else if line.isEnd {
                reportStrayText()
                report(line.number, "END:VCARD without a BEGIN:VCARD before it (ignored)")
            } else if let stray = strayText {
                strayText = (stray.first, stray.count + 1)
            } else {
                strayText = (line, 1)
            }
        }
    }

    /// How reading one card ended.
    private enum CardOutcome {
        case card(VCard)
        /// The card had a problem (reported).
        case skipped
        /// Another `BEGIN:VCARD`, on this line, came before the card's end (reported).
        case nextBegins(Int)
    }

    /// Reads one card after its `BEGIN:VCARD` through its `END:VCARD`.
    private mutating func readCard(begunAt begin: Int) -> CardOutcome {
        var version: VCard.Version?
        var properties: [Property] = []
        var skipped = false
        func skip(_ line: LineReader.Line, _ reason: String) {
            report(line.number, "\(reason) — '\(Self.excerpt(line.text))' (card skipped)")
            skipped = true
        }

        while let line = lines.next() {
            if line.isBlank { continue }
            if line.isEnd {
                return skipped ? .skipped : .card(VCard(version: version ?? .v3, properties: properties))
            }
            if line.isBegin {
                if !skipped, let agent = properties.last, agent.name == "AGENT",
                    agent.value.trimmingWhitespace().isEmpty
                {
                    guard let embedded = readEmbeddedCard(line) else { break }
                    properties[properties.count - 1].text = embedded
                    continue
                }
                report(
                    begin,
                    "BEGIN:VCARD without END:VCARD — the next BEGIN:VCARD is on line \(line.number) (card skipped)")
                return .nextBegins(line.number)
            }
            if skipped { continue }
            do {
                var property = try ContentLine.parse(line.bytes)
                if property.name == "VERSION" {
                    switch property.value.trimmingWhitespace() {
                    case "2.1", "3.0": version = .v3
                    case "4.0": version = .v4
                    default: skip(line, "unsupported vCard version")
                    }
                    continue
                }
                if QuotedPrintable.isEncoded(property) {
                    joinSoftLineBreaks(&property)
                    QuotedPrintable.decode(&property)
                }
                properties.append(property)
            } catch {
                skip(line, error.reason)
            }
        }
        report(begin, "BEGIN:VCARD without END:VCARD before the end of the input (card skipped)")
        return .skipped
    }

    /// vCard 2.1 writers break quoted-printable lines with a trailing `=` and do not indent the
    /// next line. Joins such lines, but never swallows a card's `END` or `BEGIN`.
    private mutating func joinSoftLineBreaks(_ property: inout Property) {
        while property.value.hasSuffix("="), let next = lines.peek(), !next.isEnd, !next.isBegin, !next.isBlank {
            _ = lines.next()
            property.value.removeLast()
            property.value += next.text
        }
    }

    /// Reads a nested card after a vCard 2.1 `AGENT:` through its matching `END:VCARD` and returns
    /// its lines as one text, or `nil` when the input ends first.
    private mutating func readEmbeddedCard(_ begin: LineReader.Line) -> String? {
        var text = [begin.text]
        var depth = 1
        while let line = lines.next() {
            text.append(line.text)
            if line.isBegin { depth += 1 }
            if line.isEnd { depth -= 1 }
            if depth == 0 { return text.joined(separator: "\n") }
        }
        return nil
    }

    private mutating func reportStrayText() {
        guard let stray = strayText else { return }
        strayText = nil
        let extent = stray.count == 1 ? "" : " and \(stray.count - 1) more line\(stray.count == 2 ? "" : "s")"
        report(stray.first.number, "text outside any vCard — '\(Self.excerpt(stray.first.text))'\(extent) (ignored)")
    }

    private mutating func report(_ line: Int, _ message: String) {
        result.problems.append(VCardProblem(line: line, message: "line \(line): \(message)"))
    }

    /// The start of a line, short enough for a message.
    private static func excerpt(_ text: String) -> String {
        text.count <= 60 ? text : text.prefix(59) + "…"
    }
}
