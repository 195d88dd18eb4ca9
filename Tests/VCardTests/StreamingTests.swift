import Foundation
import Testing
import VCard

@Suite("Card by card: the streaming reader gives what the whole-file parser gives")
struct StreamingTests {
    /// Typical and hostile cards, with stray text, a broken card, a card with no end and a stray end
    /// among them, and a card cut off at the end of the file.
    static func sample(seed: Int) -> String {
        var generator = CardGenerator(seed: UInt64(seed))
        var text = ""
        for index in 0..<300 {
            let card = index % 7 == 3 ? generator.hostileCard() : generator.typicalCard(index)
            text += VCardSerializer.serialize(card)
            switch index % 50 {
            case 10: text += "stray text between cards\r\n"
            case 20: text += "BEGIN:VCARD\r\nVERSION:4.0\r\nFN broken\r\nEND:VCARD\r\n"
            case 30: text += "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:No end\r\n"
            case 40: text += "END:VCARD\r\n"
            default: break
            }
        }
        text += "BEGIN:VCARD\r\nFN:Cut off at the end\r\n"
        return text
    }

    @Test("cards, their lines and the problems, with broken and hostile cards among typical ones", arguments: 0..<4)
    func sameAsWholeFile(seed: Int) {
        let text = Self.sample(seed: seed)
        let bytes = Array(text.utf8)
        let whole = VCardParser.parse(text)

        var cards = VCardParser.Cards(utf8: bytes)
        var read: [VCard] = []
        var lines: [Int] = []
        var progress: [Int] = []
        while let (card, line) = cards.next() {
            read.append(card)
            lines.append(line)
            progress.append(cards.bytesRead)
        }
        #expect(read == whole.cards)
        #expect(lines == whole.cardLines)
        #expect(cards.problems == whole.problems)
        #expect(cards.problems.count >= 24, "the broken pieces were reported")
        #expect(progress == progress.sorted() && cards.bytesRead == cards.byteCount)
        #expect(cards.next() == nil, "the end stays the end")
    }

    @Test(
        "a file read in pieces of any size gives what the whole file gives; pieces are cut at cards (CR LF, LF, a BOM)",
        arguments: [1, 7, 100, 4096, 1 << 20])
    func piecesSameAsWholeFile(pieceSize: Int) throws {
        for (seed, form) in [(0, "crlf"), (1, "lf"), (2, "bom")] {
            var text = Self.sample(seed: seed)
            if form == "lf" { text = text.replacingOccurrences(of: "\r\n", with: "\n") }
            if form == "bom" { text = "\u{FEFF}" + text }
            let bytes = Array(text.utf8)
            let whole = VCardParser.parse(text)

            var offset = 0
            var largestRead = 0
            var cards = StreamedCards {
                let piece = Array(bytes[offset..<min(bytes.count, offset + pieceSize)])
                offset += piece.count
                return piece
            }
            var read: [VCard] = []
            var lines: [Int] = []
            var progress: [Int] = []
            while let (card, line) = try cards.next() {
                read.append(card)
                lines.append(line)
                progress.append(cards.bytesRead)
                largestRead = max(largestRead, offset - cards.bytesRead)
            }
            #expect(read == whole.cards, "\(form)")
            #expect(lines == whole.cardLines, "\(form)")
            #expect(cards.problems == whole.problems, "\(form)")
            #expect(progress == progress.sorted() && cards.bytesRead == bytes.count, "\(form)")
            #expect(try cards.next() == nil, "the end stays the end")
            if pieceSize <= 4096 {
                #expect(largestRead < bytes.count / 4, "\(form): held \(largestRead) of \(bytes.count) bytes unparsed")
            }
        }
    }
}
