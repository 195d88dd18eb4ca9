/// Cards of a vCard file that arrives in pieces (read a few MiB at a time), exactly as
/// ``VCardParser/Cards`` reads them from the whole file: each piece is cut after its last whole card,
/// so that no card spans two, and line numbers run on across them. A large file is never held whole.
public struct StreamedCards {
    private let read: () throws -> [UInt8]
    /// Bytes read and not yet parsed: the rest of a card a piece ended in.
    private var pending: [UInt8] = []
    private var cards: VCardParser.Cards?
    private var ended = false
    private var firstLine = 1
    /// Bytes of the pieces parsed before the current one.
    private var parsedBefore = 0
    private var earlierProblems: [VCardProblem] = []

    /// Cards of the bytes `read` returns, call after call, until it returns none.
    public init(read: @escaping () throws -> [UInt8]) {
        self.read = read
    }

    /// The next valid card and the line of its `BEGIN:VCARD`; nil at the end of the input.
    public mutating func next() throws -> (card: VCard, line: Int)? {
        while true {
            if var current = cards {
                let card = current.next()
                cards = current
                if let card { return card }
                earlierProblems += current.problems
                firstLine = current.nextLineNumber
                parsedBefore += current.byteCount
                cards = nil
            }
            guard let piece = try nextPiece() else { return nil }
            cards = VCardParser.Cards(utf8: piece, firstLine: firstLine)
        }
    }

    /// The problems found so far (all of them once ``next()`` returned nil), in file order.
    public var problems: [VCardProblem] { earlierProblems + (cards?.problems ?? []) }

    /// How much of the input has been parsed, in bytes.
    public var bytesRead: Int { parsedBefore + (cards?.bytesRead ?? 0) }

    /// The next run of whole cards (all that is left once the input ends); nil when nothing is left.
    private mutating func nextPiece() throws -> [UInt8]? {
        var searchedUpTo = 0
        while !ended {
            if let cut = Self.lastCardBoundary(in: pending, from: searchedUpTo) {
                let piece = Array(pending[..<cut])
                pending.removeFirst(cut)
                return piece
            }
            searchedUpTo = max(0, pending.count - 32)
            let more = try read()
            if more.isEmpty { ended = true } else { pending += more }
        }
        guard !pending.isEmpty else { return nil }
        defer { pending = [] }
        return pending
    }

    /// Where the last `BEGIN:VCARD` line that follows an `END:VCARD` line starts, at `from` or later; nil
    /// when there is none. Only these exact, upper-case lines ending in CR LF or LF are looked for: a
    /// file written otherwise is cut less often (or read whole), never wrongly. At such a line every
    /// card has ended and the next begins, so the pieces parse as the whole file does.
    static func lastCardBoundary(in bytes: [UInt8], from start: Int) -> Int? {
        let begin = Array("BEGIN:VCARD".utf8)
        let end = Array("END:VCARD".utf8)
        var index = bytes.count - begin.count - 1  // room for the line break after BEGIN:VCARD
        while index > start {
            defer { index -= 1 }
            guard bytes[index] == UInt8(ascii: "B"), bytes[index - 1] == lineFeed,
                bytes[index + begin.count] == lineFeed || bytes[index + begin.count] == carriageReturn,
                bytes[index..<(index + begin.count)].elementsEqual(begin)
            else { continue }
            // The line before: END:VCARD, ending in LF or CR LF, itself at the start of a line.
            let endStops = index >= 2 && bytes[index - 2] == carriageReturn ? index - 2 : index - 1
            let endStarts = endStops - end.count
            guard endStarts >= start, bytes[endStarts..<endStops].elementsEqual(end),
                endStarts == 0 || bytes[endStarts - 1] == lineFeed || bytes[endStarts - 1] == carriageReturn
            else { continue }
            return index
        }
        return nil
    }
}

private let lineFeed = UInt8(ascii: "\n")
private let carriageReturn = UInt8(ascii: "\r")
