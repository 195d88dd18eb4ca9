import ContactsModel
import Testing

@Suite("A message's sender: From: headers as mail clients write them")
struct MailSenderTests {
    @Test("the forms of RFC 5322: name and angle address, quoted name, comment, bare address, folded")
    func forms() throws {
        let cases: [(String, String, String)] = [
            ("From: Ada Lovelace <ada@example.org>", "Ada Lovelace", "ada@example.org"),
            ("From: \"Lovelace, Ada\" <ada@example.org>", "Lovelace, Ada", "ada@example.org"),
            ("From: ada@example.org (Ada Lovelace)", "Ada Lovelace", "ada@example.org"),
            ("from: ada@example.org", "", "ada@example.org"),
            (
                "Subject: hi\nFrom: Ada\n Lovelace\n  <ada@example.org>\nTo: b@example.org", "Ada Lovelace",
                "ada@example.org"
            ),
        ]
        for (message, name, address) in cases {
            let sender = try FromHeader(message: message + "\n\nFrom: body <not@this.one>\n")
            #expect(sender.name == name, "\(message)")
            #expect(sender.address == address, "\(message)")
        }
    }

    @Test("encoded words: base64 and quoted-printable, UTF-8 and Latin-1, adjacent words joined")
    func encodedWords() throws {
        let cases: [(String, String)] = [
            ("=?UTF-8?B?xYF1a2FzeiBOb3dhaw==?= <lukasz@example.pl>", "Łukasz Nowak"),
            ("=?utf-8?Q?Zo=C3=AB_=C3=85ngstr=C3=B6m?= <zoe@example.se>", "Zoë Ångström"),
            ("=?ISO-8859-1?Q?J=F6rg?= =?ISO-8859-1?Q?_M=FCller?= <jm@example.de>", "Jörg Müller"),
            ("Dr. =?UTF-8?B?5byg5Lyf?= <zw@example.cn>", "Dr. 张伟"),
            ("=?KOI8-R?B?8tXT?= <r@example.ru>", "=?KOI8-R?B?8tXT?="),
        ]
        for (field, name) in cases {
            #expect(try FromHeader(fromField: field).name == name, "\(field)")
        }
    }

    @Test("no From:, or one without a single address, is refused with what to do")
    func refused() {
        #expect(throws: DeviceError.self) { try FromHeader(message: "Subject: hello\n\nbody") }
        #expect(throws: DeviceError.self) { try FromHeader(message: "From: undisclosed-recipients:;\n\n") }
        #expect(throws: DeviceError.self) { try FromHeader(message: "From: a@example.org, b@example.org\n\n") }
    }
}
