import Foundation
import Testing
import VCard

@Suite("Long lines fold at 75 octets and unfold back")
struct FoldingTests {
    /// The physical lines of serialized text, without their CR LF.
    private func physicalLines(_ text: String) -> [Substring] {
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    static let longTexts = [
        String(repeating: "Zoë Ångström ", count: 20),
        String(repeating: "张伟", count: 60),
        String(repeating: "👩‍👩‍👧", count: 30),
        String(repeating: "a👩‍👩‍👧b", count: 25),
        "x" + String(repeating: "🇳🇴👍🏽", count: 30),
        String(repeating: "e\u{301}\u{302}\u{303}", count: 40),
        String(repeating: "ascii only, quite long; with escapes\\ ", count: 6),
    ]

    @Test("every physical line is at most 75 octets and continuation lines start with one space", arguments: longTexts)
    func foldsAt75Octets(text: String) {
        let file = VCardSerializer.serialize(VCard(properties: [Property(name: "NOTE", text: text)]))
        let lines = physicalLines(file)
        #expect(lines.count > 3)
        for (index, line) in lines.enumerated() {
            #expect(line.utf8.count <= 75)
            let isContinuation = index > 2 && index < lines.count - 1 && !line.hasPrefix("NOTE:")
            #expect(line.hasPrefix(" ") == isContinuation)
        }
    }

    @Test("folds fall between characters: no line splits a letter, a 张, or an emoji family", arguments: longTexts)
    func foldsBetweenGraphemes(text: String) {
        let file = VCardSerializer.serialize(VCard(properties: [Property(name: "NOTE", text: text)]))
        let pieces = physicalLines(file).dropFirst(2).dropLast().enumerated().map { index, line in
            index == 0 ? line.dropFirst("NOTE:".count) : line.dropFirst()
        }
        // Graphemes of the pieces, each taken alone, must be the graphemes of the escaped whole.
        let escaped = Property(name: "NOTE", text: text).value
        #expect(pieces.flatMap { Array($0) } == Array(escaped))
    }

    @Test("folded lines unfold to the same value", arguments: longTexts)
    func unfoldsBack(text: String) {
        let card = VCard(properties: [Property(name: "NOTE", text: text, parameters: [.type(text)])])
        #expect(VCardParser.parse(VCardSerializer.serialize(card)).cards == [card])
    }

    @Test("a single grapheme longer than a line is split between scalars, never inside a UTF-8 sequence")
    func hugeGraphemeSplitsAtScalars() throws {
        let huge = "a" + String(repeating: "\u{301}", count: 100)  // one grapheme, 201 octets
        let card = VCard(properties: [Property(name: "NOTE", text: huge)])
        let file = VCardSerializer.serialize(card)
        for line in physicalLines(file) {
            #expect(line.utf8.count <= 75)
            #expect(String(validating: Array(line.utf8), as: UTF8.self) != nil)
        }
        #expect(VCardParser.parse(file).cards == [card])
    }

    @Test("a character that a writer split across a fold, mid UTF-8 sequence, comes back whole")
    func unfoldsSplitMultiByteCharacter() {
        // "张" is E5 BC A0 and "ë" is C3 AB: fold inside each.
        var bytes = Array("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Zo".utf8)
        bytes += [0xC3, 0x0D, 0x0A, 0x20, 0xAB]
        bytes += Array(" ".utf8) + [0xE5, 0xBC, 0x0D, 0x0A, 0x09, 0xA0] + Array("伟\r\nEND:VCARD\r\n".utf8)
        let result = VCardParser.parse(Data(bytes))
        #expect(result.problems == [])
        #expect(result.cards.first?.first("FN")?.text == "Zoë 张伟")
    }

    @Test("unfolding removes exactly one space or tab, so spaces at a fold survive")
    func unfoldingRemovesOneWhitespace() {
        let result = VCardParser.parse("BEGIN:VCARD\r\nNOTE:one\r\n  two\r\n\tthree\r\n \r\nEND:VCARD\r\n")
        #expect(result.cards.first?.first("NOTE")?.value == "one twothree")
    }

    @Test("short lines are not folded")
    func shortLinesStay() {
        let text = String(repeating: "x", count: 70)  // "NOTE:" + 70 = 75 octets
        let file = VCardSerializer.serialize(VCard(properties: [Property(name: "NOTE", text: text)]))
        #expect(file == "BEGIN:VCARD\r\nVERSION:4.0\r\nNOTE:\(text)\r\nEND:VCARD\r\n")
    }
}
