import Testing
import VCard

@Suite("Text values are escaped and unescaped")
struct EscapingTests {
    @Test("a note with commas, semicolons, backslashes and line breaks is escaped in the file")
    func noteIsEscaped() {
        let note = Property(name: "NOTE", text: "Paid 5,00 €; owes C:\\Temp\nCall back")
        #expect(note.value == #"Paid 5\,00 €\; owes C:\\Temp\nCall back"#)
        #expect(note.text == "Paid 5,00 €; owes C:\\Temp\nCall back")
        let file = VCardSerializer.serialize(VCard(properties: [note]))
        #expect(file.contains(#"NOTE:Paid 5\,00 €\; owes C:\\Temp\nCall back"# + "\r\n"))
    }

    @Test("\\n and \\N both read as a line break; \\: reads as a colon; other backslashes stay")
    func unescapesWhatWritersWrite() {
        let card = VCardParser.parse(
            """
            BEGIN:VCARD
            VERSION:3.0
            NOTE:one\\ntwo\\Nthree
            URL:http\\://example.com/a
            X-PATH:C:\\Users\\zoe\\x
            X-TRAILING:ends with \\
            END:VCARD
            """
        ).cards[0]
        #expect(card.first("NOTE")?.text == "one\ntwo\nthree")
        #expect(card.first("URL")?.text == "http://example.com/a")
        #expect(card.first("X-PATH")?.text == "C:\\Users\\zoe\\x")
        #expect(card.first("X-TRAILING")?.text == "ends with \\")
    }

    @Test("N and ADR split at unescaped ';' and ',' and keep escaped ones in the value")
    func structuredValues() {
        let card = VCardParser.parse(
            """
            BEGIN:VCARD
            VERSION:4.0
            FN:José Ñúñez
            N:Ñúñez\\, Jr.;José;Luis,María;Dr.;
            ADR;TYPE=work:;Suite 5\\;B;1 Calle Mayor\\nPortal 2;Madrid;;28013;Spain
            END:VCARD
            """
        ).cards[0]
        #expect(card.first("N")?.components == [["Ñúñez, Jr."], ["José"], ["Luis", "María"], ["Dr."], [""]])
        #expect(
            card.first("ADR")?.components == [
                [""], ["Suite 5;B"], ["1 Calle Mayor\nPortal 2"], ["Madrid"], [""], ["28013"], ["Spain"],
            ]
        )
    }

    @Test("setting components escapes each value and writes ';' and ',' between them")
    func settingComponents() {
        var name = Property(name: "N", components: [["O'Brien; Smith"], ["Ada"], ["Mary", "Anne"], [], ["PhD, MD"]])
        #expect(name.value == #"O'Brien\; Smith;Ada;Mary,Anne;;PhD\, MD"#)
        name.components[1] = ["Grace\\Ada"]
        #expect(name.value == #"O'Brien\; Smith;Grace\\Ada;Mary,Anne;;PhD\, MD"#)
        #expect(name.components == [["O'Brien; Smith"], ["Grace\\Ada"], ["Mary", "Anne"], [""], ["PhD, MD"]])
    }

    @Test("an empty value reads as one empty text and one empty component")
    func emptyValue() {
        let property = Property(name: "NOTE", value: "")
        #expect(property.text == "")
        #expect(property.components == [[""]])
    }

    @Test("a raw value given with a line break holds \\n instead, as a file would")
    func rawLineBreaks() {
        #expect(Property(name: "NOTE", value: "a\r\nb\rc\nd").value == #"a\nb\nc\nd"#)
    }
}
