import Testing
import VCard

@Suite("Card by card: the streaming reader gives what the whole-file parser gives")
struct StreamingTests {
    @Test("cards, their lines and the problems, with broken and hostile cards among typical ones", arguments: 0..<4)
    func sameAsWholeFile(seed: Int) {
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
}
