import Testing
import VCard

@Suite("A broken card is skipped and reported; the rest of the file imports")
struct ParseProblemTests {
    @Test("a property without ':' in the middle card skips that card with its line number")
    func malformedCardInTheMiddle() {
        let file = """
            BEGIN:VCARD
            VERSION:3.0
            FN:Ada Lovelace
            NOTE:a note folded
              over two lines
            END:VCARD

            BEGIN:VCARD
            VERSION:3.0
            FN:Broken Card
            EMAIL;TYPE=work ada@example.org
            TEL:555-0100
            END:VCARD
            BEGIN:VCARD
            VERSION:4.0
            FN:Grace Hopper
            END:VCARD
            """
        let result = VCardParser.parse(file)
        #expect(result.cards.map { $0.first("FN")?.text } == ["Ada Lovelace", "Grace Hopper"])
        #expect(result.cardLines == [1, 14])
        #expect(result.problems.map(\.line) == [11])
        #expect(
            result.problems.first?.message
                == "line 11: property without ':' — 'EMAIL;TYPE=work ada@example.org' (card skipped)")
        #expect(result.problems.first?.description == result.problems.first?.message)
    }

    @Test(
        "bad names are reported with what is wrong",
        arguments: [
            (":no name", "property without a name"),
            ("E MAIL:ada@example.org", "property name 'E MAIL' has characters other than letters, digits and '-'"),
            ("my group.EMAIL:ada@example.org", "property group 'my group' has characters other than"),
            (".EMAIL:ada@example.org", "property group before '.' is empty"),
            ("EMAIL;TY PE=work:ada@example.org", "parameter name 'TY PE' has characters other than"),
            ("EMAIL;=work:ada@example.org", "parameter without a name"),
            ("EMAIL;TYPE=\"work:ada@example.org", "parameter value opens '\"' but never closes it"),
            ("VERSION:5.0", "unsupported vCard version"),
        ])
    func invalidLines(line: String, reason: String) {
        let result = VCardParser.parse("BEGIN:VCARD\nFN:A\n\(line)\nEND:VCARD\nBEGIN:VCARD\nFN:B\nEND:VCARD\n")
        #expect(result.cards.map { $0.first("FN")?.text } == ["B"])
        #expect(result.problems.count == 1)
        #expect(result.problems.first?.line == 3)
        #expect(result.problems.first?.message.hasPrefix("line 3: \(reason)") == true)
        #expect(result.problems.first?.message.hasSuffix("(card skipped)") == true)
    }

    @Test("a card missing END:VCARD before the next card is reported at its BEGIN; the next card imports")
    func missingEndBeforeNextCard() {
        let result = VCardParser.parse("BEGIN:VCARD\nFN:A\nBEGIN:VCARD\nFN:B\nEND:VCARD\n")
        #expect(result.cards.map { $0.first("FN")?.text } == ["B"])
        #expect(result.cardLines == [3])
        #expect(
            result.problems == [
                VCardProblem(
                    line: 1,
                    message: "line 1: BEGIN:VCARD without END:VCARD — the next BEGIN:VCARD is on line 3 (card skipped)")
            ])
    }

    @Test("a card missing END:VCARD at the end of the file is reported; the cards before import")
    func missingEndAtEndOfFile() {
        let result = VCardParser.parse("BEGIN:VCARD\nFN:A\nEND:VCARD\nBEGIN:VCARD\nFN:B\nEMAIL:b@example.org\n")
        #expect(result.cards.map { $0.first("FN")?.text } == ["A"])
        #expect(result.problems.map(\.line) == [4])
        #expect(result.problems.first?.message.contains("without END:VCARD before the end of the input") == true)
    }

    @Test("text outside any card is reported once per run of lines, and parsing goes on")
    func strayText() {
        let result = VCardParser.parse(
            "Contacts export\nby Example App\n\nBEGIN:VCARD\nFN:A\nEND:VCARD\nEND:VCARD\ntrailer\n")
        #expect(result.cards.count == 1)
        #expect(
            result.problems.map(\.message) == [
                "line 1: text outside any vCard — 'Contacts export' and 1 more line (ignored)",
                "line 7: END:VCARD without a BEGIN:VCARD before it (ignored)",
                "line 8: text outside any vCard — 'trailer' (ignored)",
            ])
    }

    @Test("a card without VERSION is vCard 3.0, and one that has neither FN nor N is still kept")
    func lenientCards() {
        let result = VCardParser.parse(
            "BEGIN:VCARD\nEMAIL:a@example.org\nEND:VCARD\nbegin:vcard\nversion:2.1\nend:vcard\n")
        #expect(result.problems == [])
        #expect(result.cards.map(\.version) == [.v3, .v3])
        #expect(result.cards.map(\.properties.count) == [1, 0])
    }

    @Test("harmless oddities are read, not reported: empty ';;', text after a closing quote, '_' in names")
    func toleratedOddities() throws {
        let result = VCardParser.parse(
            "BEGIN:VCARD\nVERSION:3.0\nEMAIL;;TYPE=work;:a@example.org\nX-MY_FIELD;LABEL=\"a\"b,c:v\nEND:VCARD\n")
        #expect(result.problems == [])
        let card = try #require(result.cards.first)
        #expect(card.first("EMAIL")?.parameters == [Parameter("TYPE", "work")])
        #expect(card.first("x-my_field")?.parameters == [Parameter("LABEL", "ab", "c")])
    }

    @Test("a long bad line is quoted shortened in the message")
    func longLineExcerpt() {
        let line = "NOTE" + String(repeating: "x", count: 100)
        let message = VCardParser.parse("BEGIN:VCARD\n\(line)\nEND:VCARD\n").problems.first?.message
        #expect(message == "line 2: property without ':' — '\(line.prefix(59))…' (card skipped)")
    }

    @Test("a vCard 2.1 AGENT with a nested card keeps it as text; an embedded 3.0 AGENT is plain text")
    func agentEmbedsACard() throws {
        let result = VCardParser.parse(
            """
            BEGIN:VCARD
            VERSION:2.1
            FN:Boss
            AGENT:
            BEGIN:VCARD
            VERSION:2.1
            FN:Assistant
            TEL:555-0101
            END:VCARD
            NOTE:after the agent
            END:VCARD
            BEGIN:VCARD
            VERSION:3.0
            FN:Other Boss
            AGENT:BEGIN:VCARD\\nFN:Susan Thomas\\nTEL:+1-555-0123\\nEND:VCARD\\n
            END:VCARD
            """)
        #expect(result.problems == [])
        #expect(result.cards.count == 2)
        let agent = try #require(result.cards.first?.first("AGENT"))
        #expect(agent.text == "BEGIN:VCARD\nVERSION:2.1\nFN:Assistant\nTEL:555-0101\nEND:VCARD")
        #expect(result.cards.first?.first("NOTE")?.text == "after the agent")
        #expect(result.cards.last?.first("AGENT")?.text == "BEGIN:VCARD\nFN:Susan Thomas\nTEL:+1-555-0123\nEND:VCARD\n")
    }
}
