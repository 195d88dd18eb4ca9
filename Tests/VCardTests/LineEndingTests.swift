import Testing
import VCard

@Suite("Files with CR LF, LF or CR line endings read the same")
struct LineEndingTests {
    static let lines = [
        "BEGIN:VCARD", "VERSION:3.0", "FN:Nguyễn Văn An", "N:Nguyễn;Văn An;;;",
        "NOTE:a long note that a writer folded", "  across two lines", "END:VCARD", "", "BEGIN:VCARD", "VERSION:4.0",
        "FN:张伟", "END:VCARD",
    ]

    @Test(
        "CR LF, LF, CR and a mix of them give the same cards and line numbers",
        arguments: ["\r\n", "\n", "\r", "mixed"])
    func lineEndings(ending: String) {
        let text: String
        if ending == "mixed" {
            let endings = ["\r\n", "\n", "\r"]
            text = Self.lines.enumerated().map { $1 + endings[$0 % 3] }.joined()
        } else {
            text = Self.lines.joined(separator: ending) + ending
        }
        let result = VCardParser.parse(text)
        #expect(result.problems == [])
        #expect(result.cardLines == [1, 9])
        #expect(result.cards.map { $0.first("FN")?.text } == ["Nguyễn Văn An", "张伟"])
        #expect(result.cards.first?.first("NOTE")?.text == "a long note that a writer folded across two lines")
        #expect(result.cards.map(\.version) == [.v3, .v4])
    }

    @Test("the serializer writes CR LF after every line, the last one too")
    func serializerWritesCRLF() {
        let file = VCardSerializer.serialize(VCard(properties: [Property(name: "FN", text: "Ada")]))
        #expect(file == "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Ada\r\nEND:VCARD\r\n")
    }

    @Test("a byte order mark and blank lines between cards are ignored")
    func byteOrderMarkAndBlankLines() {
        let result = VCardParser.parse("\u{FEFF}BEGIN:VCARD\nFN:A\nEND:VCARD\n\n\n  \nBEGIN:VCARD\nFN:B\nEND:VCARD")
        #expect(result.problems == [])
        #expect(result.cards.count == 2)
    }
}
