/// Reads UTF-8 input as logical content lines: splits at CR LF, LF or CR, and unfolds (a
/// physical line that starts with a space or tab continues the one before; the line break and
/// that one character are removed).
///
/// Unfolding joins bytes, so a multi-byte character that a writer split across a fold comes back
/// whole. An unfolded line is a slice of the input; only folded lines are copied.
struct LineReader {
    /// A logical line and the 1-based number of the physical line it starts on.
    struct Line {
        var bytes: ArraySlice<UInt8>
        var number: Int

        /// Whether the line holds nothing but spaces and tabs.
        var isBlank: Bool {
            bytes.allSatisfy { $0 == space || $0 == tab }
        }

        /// Whether the line is `BEGIN:VCARD`, ignoring case and trailing blanks.
        var isBegin: Bool { matches("BEGIN:VCARD") }

        /// Whether the line is `END:VCARD`, ignoring case and trailing blanks.
        var isEnd: Bool { matches("END:VCARD") }

        /// The line as text, for messages and embedded cards.
        var text: String { String(decoding: bytes, as: UTF8.self) }

        private func matches(_ keyword: StaticString) -> Bool {
            var trimmed = bytes
            while let last = trimmed.last, last == space || last == tab { trimmed.removeLast() }
            guard trimmed.count == keyword.utf8CodeUnitCount else { return false }
            let expected = UnsafeBufferPointer(start: keyword.utf8Start, count: keyword.utf8CodeUnitCount)
            return zip(trimmed, expected).allSatisfy { asciiUppercased($0) == $1 }
        }
    }

    private let bytes: [UInt8]
    private var position: Int
    private var nextNumber = 1
    private var peeked: Line?

    /// How much of the input has been read, in bytes.
    var bytesRead: Int { position }
    /// The number of the physical line after those read so far.
    var nextLineNumber: Int { nextNumber }

    /// Lines of `bytes`, numbered from `firstLine` (the input may be a piece of a larger file).
    init(_ bytes: [UInt8], firstLine: Int = 1) {
        self.bytes = bytes
        nextNumber = firstLine
        let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
        position = bytes.starts(with: byteOrderMark) ? byteOrderMark.count : 0
    }

    /// The next logical line, or `nil` at the end of the input.
    mutating func next() -> Line? {
        if let line = peeked {
            peeked = nil
            return line
        }
        let number = nextNumber
        guard let first = nextPhysicalLine() else { return nil }
        guard startsContinuation else { return Line(bytes: bytes[first], number: number) }
        var joined = Array(bytes[first])
        while startsContinuation, let continuation = nextPhysicalLine() {
            joined.append(contentsOf: bytes[(continuation.lowerBound + 1)..<continuation.upperBound])
        }
        return Line(bytes: joined[...], number: number)
    }

    /// The line ``next()`` will return, without consuming it.
    mutating func peek() -> Line? {
        if peeked == nil { peeked = next() }
        return peeked
    }

    private var startsContinuation: Bool {
        position < bytes.count && (bytes[position] == space || bytes[position] == tab)
    }

    private mutating func nextPhysicalLine() -> Range<Int>? {
        guard position < bytes.count else { return nil }
        let start = position
        var end = start
        while end < bytes.count && bytes[end] != lineFeed && bytes[end] != carriageReturn { end += 1 }
        position = end
        if position < bytes.count {
            let isCRLF =
                bytes[position] == carriageReturn && position + 1 < bytes.count
                && bytes[position + 1] == lineFeed
            position += isCRLF ? 2 : 1
        }
        nextNumber += 1
        return start..<end
    }
}

private let space = UInt8(ascii: " ")
private let tab = UInt8(ascii: "\t")
private let carriageReturn = UInt8(ascii: "\r")
private let lineFeed = UInt8(ascii: "\n")

/// The byte with ASCII `a`–`z` made upper case.
func asciiUppercased(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 32 : byte
}
