import Testing
import VCard

@Suite("A card written and read back is the same card")
struct RoundTripTests {
    /// The text with CR LF and CR turned into LF, scalar by scalar: a CR can share a Character
    /// with a combining mark that follows it.
    static func withLineFeeds(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        var previous: Unicode.Scalar?
        for scalar in text.unicodeScalars {
            if scalar == "\r" {
                scalars.append("\n")
            } else if scalar != "\n" || previous != "\r" {
                scalars.append(scalar)
            }
            previous = scalar
        }
        return String(scalars)
    }

    @Test("random cards full of escapes, quotes, controls and emoji survive serialize → parse", arguments: 0..<40)
    func hostileCardsRoundTrip(seed: Int) {
        var generator = CardGenerator(seed: UInt64(seed))
        let cards = (0..<25).map { _ in generator.hostileCard() }
        let file = VCardSerializer.serialize(cards)
        let result = VCardParser.parse(file)
        #expect(result.problems == [])
        #expect(result.cards.count == cards.count)
        for (read, written) in zip(result.cards, cards) {
            #expect(read == written)
        }
    }

    @Test("text set through the API reads back the same, with every line break as \\n")
    func textRoundTrips() {
        var generator = CardGenerator(seed: 7)
        for _ in 0..<500 {
            let text = generator.hostileText()
            let card = VCard(properties: [Property(name: "NOTE", text: text)])
            let read = VCardParser.parse(VCardSerializer.serialize(card)).cards.first?.first("NOTE")?.text
            #expect(read == Self.withLineFeeds(text))
        }
    }

    @Test("components set through the API read back the same")
    func componentsRoundTrip() {
        var generator = CardGenerator(seed: 11)
        for _ in 0..<300 {
            let components = (0..<Int.random(in: 1...7, using: &generator.random)).map { _ in
                (0..<Int.random(in: 1...3, using: &generator.random)).map { _ in
                    Self.withLineFeeds(generator.hostileText(maximumLength: 10))
                }
            }
            let card = VCard(properties: [Property(name: "ADR", components: components)])
            let read = VCardParser.parse(VCardSerializer.serialize(card)).cards.first?.first("ADR")?.components
            #expect(read == components)
        }
    }

    @Test("parameter values with quotes, carets, colons and line breaks read back the same")
    func parameterValuesRoundTrip() {
        let values = ["a:b", "x;y", "one,two", "say \"hi\"", "^n is not a newline", "two\nlines", "", " padded ", "^"]
        let card = VCard(properties: [
            Property(
                name: "X-TEST", parameters: [Parameter(name: "LABEL", values: values), Parameter("X-BARE")], value: "v")
        ])
        let read = VCardParser.parse(VCardSerializer.serialize(card)).cards
        #expect(read == [card])
        #expect(read.first?.properties.first?.parameters.first?.values == values)
    }

    @Test("a real-world file is stable: parse → serialize → parse gives the same cards and the same text")
    func realWorldFileIsStable() {
        let file = """
            BEGIN:VCARD
            VERSION:3.0
            N:Ångström;Zoë;;;
            FN:Zoë Ångström
            item1.EMAIL;type=INTERNET;type=pref:zoe@example.org
            item1.X-ABLabel:_$!<Other>!$_
            TEL;type=CELL;type=VOICE;type=pref:+1-555-0100
            URL;type=pref:http\\://example.com
            NOTE:Line one\\nLine two\\, with comma
            END:VCARD

            """
        let first = VCardParser.parse(file)
        let written = VCardSerializer.serialize(first.cards)
        let second = VCardParser.parse(written)
        #expect(first.problems == [])
        #expect(second.cards == first.cards)
        #expect(VCardSerializer.serialize(second.cards) == written)
    }
}
