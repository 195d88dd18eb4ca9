import Testing
import VCard

@Suite("Labelled emails and phones: TYPE and PREF in every version's spelling")
struct TypeParameterTests {
    @Test("vCard 3.0: TYPE=WORK,VOICE, repeated TYPE, bare 2.1 params and pref")
    func version3Types() throws {
        let card = try #require(
            VCardParser.parse(
                """
                BEGIN:VCARD
                VERSION:3.0
                FN:Ada Lovelace
                TEL;TYPE=WORK,VOICE:+1-555-0100
                EMAIL;TYPE=work;TYPE=pref:ada@example.org
                EMAIL;type=INTERNET;type=HOME:ada@example.net
                TEL;WORK;VOICE;PREF:555-0101
                TEL;CELL:555-0102
                PHOTO;ENCODING=b;TYPE=JPEG:AAAA
                END:VCARD
                """
            ).cards.first)
        let tels = card.all("tel")
        let emails = card.all("EMAIL")
        #expect(tels.map(\.types) == [["work", "voice"], ["work", "voice", "pref"], ["cell"]])
        #expect(emails.map(\.types) == [["work", "pref"], ["internet", "home"]])
        #expect(tels.map(\.preference) == [nil, 1, nil])
        #expect(emails.map(\.preference) == [1, nil])
        #expect(card.first("PHOTO")?.types == ["jpeg"])
        #expect(tels[1].parameters == [Parameter("WORK"), Parameter("VOICE"), Parameter("PREF")])
    }

    @Test("vCard 4.0: TYPE=\"work,voice\" keeps one quoted value, types splits it, PREF=1 ranks")
    func version4Types() throws {
        let card = try #require(
            VCardParser.parse(
                """
                BEGIN:VCARD
                VERSION:4.0
                FN:Grace Hopper
                TEL;VALUE=uri;TYPE="work,voice";PREF=1:tel:+1-555-555-0199
                TEL;TYPE=home;TYPE=cell;PREF=2:tel:+1-555-555-0198
                EMAIL;TYPE="work","internet":grace@example.com
                EMAIL:grace@example.net
                END:VCARD
                """
            ).cards.first)
        let tels = card.all("TEL")
        #expect(tels[0].parameters[1] == Parameter(name: "TYPE", values: ["work,voice"]))
        #expect(tels.map(\.types) == [["work", "voice", "pref"], ["home", "cell", "pref"]])
        #expect(tels.map(\.preference) == [1, 2])
        #expect(card.all("EMAIL").map(\.types) == [["work", "internet"], []])
        #expect(card.all("EMAIL").map(\.preference) == [nil, nil])
    }

    @Test("parameter names are case-insensitive and values are caret-decoded")
    func parameterNamesAndCarets() throws {
        let card = try #require(
            VCardParser.parse(
                """
                BEGIN:VCARD
                VERSION:4.0
                FN:Zoë
                adr;label="1 Main St.^nSpringfield, IL^n^'Home^' ^^_^^";type=home:;;1 Main St.;Springfield;IL;;
                END:VCARD
                """
            ).cards.first)
        let address = try #require(card.first("ADR"))
        #expect(address.name == "ADR")
        #expect(address.parameters.map(\.name) == ["LABEL", "TYPE"])
        #expect(address.parameters[0].values == ["1 Main St.\nSpringfield, IL\n\"Home\" ^_^"])
    }

    @Test("written parameters are quoted only when they must be")
    func serializedParameters() {
        let card = VCard(properties: [
            Property(name: "TEL", text: "+1-555-0100", parameters: [.type("work", "voice"), .pref(1)]),
            Property(
                name: "EMAIL", text: "ada@example.org", parameters: [Parameter(name: "TYPE", values: ["work,voice"])]),
            Property(
                name: "ADR", components: [[]], parameters: [Parameter("LABEL", "Flat 2; 1 Main St.\nSpringfield")]),
        ])
        let file = VCardSerializer.serialize(card)
        #expect(file.contains("\r\nTEL;TYPE=work,voice;PREF=1:+1-555-0100\r\n"))
        #expect(file.contains("\r\nEMAIL;TYPE=\"work,voice\":ada@example.org\r\n"))
        #expect(file.contains("\r\nADR;LABEL=\"Flat 2; 1 Main St.^nSpringfield\":\r\n"))
    }
}
