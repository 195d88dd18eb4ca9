import Testing
import VCard

@Suite("Quoted-printable values from vCard 2.1 and 3.0 decode into plain text")
struct QuotedPrintableTests {
    @Test("UTF-8 quoted-printable N, FN and NOTE decode, and ENCODING and CHARSET are dropped")
    func decodesUTF8() throws {
        let card = try #require(
            VCardParser.parse(
                """
                BEGIN:VCARD
                VERSION:3.0
                N;ENCODING=QUOTED-PRINTABLE;CHARSET=UTF-8:=C3=85ngstr=C3=B6m;Zo=C3=AB;;;
                FN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:Zo=C3=AB =C3=85ngstr=C3=B6m
                NOTE;ENCODING=QUOTED-PRINTABLE:First line=0D=0ASecond line =F0=9F=99=82
                TEL;TYPE=CELL:555-0100
                END:VCARD
                """
            ).cards.first)
        #expect(card.first("N")?.components == [["Ångström"], ["Zoë"], [""], [""], [""]])
        #expect(card.first("FN")?.text == "Zoë Ångström")
        #expect(card.first("FN")?.parameters == [])
        #expect(card.first("NOTE")?.text == "First line\nSecond line 🙂")
        #expect(card.first("NOTE")?.value == "First line\\nSecond line 🙂")
    }

    @Test("vCard 2.1 soft line breaks join unindented lines; bare QUOTED-PRINTABLE and Latin-1 work")
    func softLineBreaksAndLatin1() throws {
        let result = VCardParser.parse(
            """
            BEGIN:VCARD
            VERSION:2.1
            N:N=C3=BA=C3=B1ez;Jos=C3=A9
            FN;CHARSET=ISO-8859-1;QUOTED-PRINTABLE:Jos=E9 N=FA=F1ez
            NOTE;ENCODING=QUOTED-PRINTABLE;CHARSET=UTF-8:Una nota muy larga que el programa parti=
            =C3=B3 en dos l=C3=ADneas =
            y una m=C3=A1s
            ADR;HOME;ENCODING=QUOTED-PRINTABLE:;;Calle Mayor 1=
            END:VCARD
            """)
        #expect(result.problems == [])
        let card = try #require(result.cards.first)
        #expect(
            card.first("N")?.text == "N=C3=BA=C3=B1ez;Jos=C3=A9", "no encoding parameter: the value stays as written")
        #expect(card.first("FN")?.text == "José Núñez")
        #expect(card.first("NOTE")?.text == "Una nota muy larga que el programa partió en dos líneas y una más")
        #expect(card.first("ADR")?.components == [[""], [""], ["Calle Mayor 1"]])
        #expect(card.first("ADR")?.parameters == [Parameter("HOME")])
    }

    @Test("invalid UTF-8 in a quoted-printable value is read as Latin-1 rather than lost")
    func invalidUTF8FallsBack() {
        let card = VCardParser.parse("BEGIN:VCARD\nFN;ENCODING=QUOTED-PRINTABLE;CHARSET=UTF-8:Zo=EB\nEND:VCARD\n").cards
            .first
        #expect(card?.first("FN")?.text == "Zoë")
    }

    @Test("decoded values are written back as plain vCard text and read the same again")
    func decodedValuesAreStable() throws {
        let first = VCardParser.parse(
            "BEGIN:VCARD\nVERSION:3.0\nNOTE;ENCODING=QUOTED-PRINTABLE:a=0Ab, c=3D\nEND:VCARD\n")
        let written = VCardSerializer.serialize(first.cards)
        #expect(written.contains("\r\nNOTE:a\\nb, c=\r\n"))
        #expect(VCardParser.parse(written).cards == first.cards)
    }
}
