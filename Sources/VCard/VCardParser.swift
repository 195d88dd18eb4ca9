import Foundation

/// What ``VCardParser`` read: the cards it kept and the problems it found.
public struct VCardParseResult: Sendable {
    /// The syntactically valid cards, in file order.
    public var cards: [VCard]
    /// The 1-based line of each card's `BEGIN:VCARD`, parallel to ``cards``.
    public var cardLines: [Int]
    /// Skipped cards and text outside any card, in file order.
    public var problems: [VCardProblem]
}

/// Reads vCard 2.1, 3.0 and 4.0 files (RFC 2426, RFC 6350).
///
/// Accepts CR LF, LF and CR line endings and unfolds folded lines. A card with a line that is not
/// a property (no `:`, no name, a name with characters other than letters, digits and `-`), or
/// with no `END:VCARD`, is skipped and reported as a ``VCardProblem``; the rest of the file still
/// imports. Text outside any card is reported too. A card is not checked for FN or N: whether a
/// card is a useful contact is the app's call.
///
/// - A card without `VERSION` is ``VCard/Version/v3``: files that omit it come from old writers.
///   A 2.1 card is read as 3.0; any other version skips the card.
/// - Quoted-printable values (`ENCODING=QUOTED-PRINTABLE`, `;QUOTED-PRINTABLE`, with `CHARSET`)
///   are decoded into plain text and lose those two parameters; 2.1's unindented soft line
///   breaks are joined.
/// - A vCard 2.1 `AGENT:` followed by a whole nested card keeps the nested card as its text.
public enum VCardParser {
    /// Parses vCard text.
    public static func parse(_ text: String) -> VCardParseResult {
        parse(utf8: Array(text.utf8))
    }

    /// Parses a UTF-8 vCard file. Lines are unfolded before they are decoded, so a character that a
    /// writer split across a fold comes back whole; other invalid UTF-8 becomes U+FFFD.
    public static func parse(_ data: Data) -> VCardParseResult {
        parse(utf8: [UInt8](data))
    }

    static func parse(utf8 bytes: [UInt8]) -> VCardParseResult {
        var reader = VCardReader(lines: LineReader(bytes))
        reader.readAll()
        return reader.result
    }

    /// Reads a UTF-8 vCard file card by card, exactly as ``parse(_:)-swift.type.method`` does, so that a
    /// large file is never held as cards all at once.
    public struct Cards {
        private var reader: VCardReader
        /// The input's size in bytes.
        public let byteCount: Int

        /// Cards of `bytes`, whose lines are numbered from `firstLine` (a piece of a larger file starts later).
        public init(utf8 bytes: [UInt8], firstLine: Int = 1) {
            reader = VCardReader(lines: LineReader(bytes, firstLine: firstLine))
            byteCount = bytes.count
        }

        /// The next valid card and the line of its `BEGIN:VCARD`; nil at the end of the input.
        public mutating func next() -> (card: VCard, line: Int)? {
            reader.nextCard()
        }

        /// The problems found so far (all of them once ``next()`` returned nil), in file order.
        public var problems: [VCardProblem] { reader.result.problems }

        /// How much of the input has been read, in bytes.
        public var bytesRead: Int { reader.bytesRead }

        /// The number of the line after those read so far.
        public var nextLineNumber: Int { reader.nextLineNumber }
    }
}
