import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncClient
import Testing

@testable import ContactsDAV

/// Cards as the clients people carry write them, PUT through real HTTP: each comes back line for line, its
/// labels and preferred items read as the app's labels on another device, and an edit in the app leaves no
/// line of the old form behind.
///
/// The cards' shapes: Apple's Contacts (iPhone, macOS) writes vCard 3.0 with custom labels in property
/// groups (`item1.EMAIL` with `item1.X-ABLabel`), its own labels as `_$!<HomePage>!$_`, `type=pref`,
/// `X-ABADR`, `X-ABRELATEDNAMES`, `IMPP;X-SERVICE-TYPE` and `X-ABUID` (as in the report and Apple
/// exports such as sipgateio-node's example card). DAVx5 writes vCard 4.0 through ez-vcard: `PREF=1`,
/// lower-case types, `RELATED;VALUE=text`, an ADR with a `LABEL` parameter, its PRODID and a lower-case
/// UUID. Evolution writes vCard 3.0 with `X-EVOLUTION-UI-SLOT` parameters and `X-EVOLUTION-FILE-AS`.
@Suite("CardDAV bridge: cards as iPhone, macOS, DAVx5 and Evolution write them")
struct ClientCardTests {
    static let apple = [
        "PRODID:-//Apple Inc.//iPhone OS 18.1//EN", "N:Torvalds;Linus;;;", "FN:Linus Torvalds",
        "item1.EMAIL;type=INTERNET;type=pref:linus@example.org", "item1.X-ABLabel:Nobel",
        "EMAIL;type=INTERNET;type=HOME:linus@home.example", "TEL;type=CELL;type=VOICE;type=pref:+1 555 0100",
        "TEL;type=WORK;type=VOICE:+1 555 0101",
        "item2.ADR;type=HOME;type=pref:;;1 Main St;Portland;OR;97201;United States",
        "item2.X-ABADR:us", "item3.URL;type=pref:https://kernel.org", "item3.X-ABLabel:_$!<HomePage>!$_",
        "item4.X-ABRELATEDNAMES;type=pref:Tove", "item4.X-ABLabel:_$!<Spouse>!$_",
        "IMPP;X-SERVICE-TYPE=Jabber;type=HOME;type=pref:xmpp:linus@example.org",
        "X-ABUID:5AD380FD-B2DE-4261-BA99-DE1D1DB52FBE\\:ABPerson", "UID:5AD380FD-B2DE-4261-BA99-DE1D1DB52FBE",
    ]

    static let davx5 = [
        "PRODID:+//IDN bitfire.at//DAVx5/4.4.3-ose ez-vcard/0.12.1", "UID:7c4d0f0a-9b1e-4c55-8d2a-3f6e1b2c9d10",
        "FN:Ada Lovelace", "N:Lovelace;Ada;;;", "TEL;TYPE=cell;PREF=1:+44 20 7946 0000",
        "TEL;TYPE=home:+44 20 7946 0001",
        "EMAIL;TYPE=work:ada@example.org", "item1.EMAIL:ada@analytical.example", "item1.X-ABLabel:Engines",
        "ADR;TYPE=home;LABEL=\"12 St James's Square\\nLondon\":;;12 St James's Square;London;;SW1Y 4JH;United Kingdom",
        "RELATED;TYPE=spouse;VALUE=text:William King", "IMPP:xmpp:ada@example.org", "REV:20261130T100000Z",
    ]

    static let evolution = [
        "UID:pas-id-5F1A2B3C00000001", "X-EVOLUTION-FILE-AS:Hopper\\, Grace", "FN:Grace Hopper", "N:Hopper;Grace;;;",
        "EMAIL;TYPE=WORK;X-EVOLUTION-UI-SLOT=1:grace@example.org", "TEL;TYPE=CELL;X-EVOLUTION-UI-SLOT=1:+1 555 0199",
        "ADR;TYPE=HOME:;;1 Navy Way;Arlington;VA;22201;USA", "REV:2026-11-30T10:00:00Z",
    ]

    @Test(
        "each client's card comes back line for line (names in upper case), with a strong ETag, and reads as the app's labels on another device",
        arguments: [
            (
                "Apple", apple, "3.0", ["Nobel: linus@example.org", "home: linus@home.example"],
                ["cell: +1 555 0100", "work: +1 555 0101"]
            ),
            (
                "DAVx5", davx5, "4.0", ["work: ada@example.org", "Engines: ada@analytical.example"],
                ["cell: +44 20 7946 0000", "home: +44 20 7946 0001"]
            ),
            ("Evolution", evolution, "3.0", ["work: grace@example.org"], ["cell: +1 555 0199"]),
        ])
    func roundTrip(client: String, lines: [String], version: String, emails: [String], phones: [String]) async throws {
        try await withBridge(devices: 2) { bridge, devices, _, _ in
            let (dav, laptop) = (devices[0], devices[1])
            let path = Bridge.contacts + client.lowercased() + ".vcf"
            let sent = card(lines, version: version)
            let put = try await bridge.put(path, sent, headers: [("If-None-Match", "*")])
            #expect(put.status == 201, "\(put.body)")
            let accept = version == "4.0" ? "text/vcard; version=4.0" : "text/vcard"
            let got = try await bridge.request("GET", path, headers: [("Accept", accept)])
            #expect(Self.normalised(got.body) == Self.normalised(sent), "\(client): \(got.body)")
            #expect(put.header("ETag") != nil && put.header("ETag") == got.header("ETag"), "\(client): \(put.headers)")

            try await dav.sync()
            try await laptop.sync()
            let contact = try #require(try laptop.reader.contacts().first)
            #expect(contact.emails.map(\.labeledText) == emails, "\(client): \(contact.emails)")
            #expect(contact.phones.map(\.labeledText) == phones, "\(client): \(contact.phones)")
            #expect(!contact.address.isEmpty, "\(client)")
        }
    }

    @Test(
        "an email, a phone and the address edited in the app are written as the app writes them: no old label, group line or pref left behind"
    )
    func editedInTheApp() async throws {
        try await withBridge(devices: 2) { bridge, devices, _, _ in
            let (dav, laptop) = (devices[0], devices[1])
            let path = Bridge.contacts + "linus.vcf"
            #expect(try await bridge.put(path, card(Self.apple)).status == 201)
            try await dav.sync()
            try await laptop.sync()
            var linus = try #require(try laptop.reader.contacts().first)
            linus.emails[0].label = "work"
            linus.phones[0].value = "+1 555 0111"
            linus.address.city = "Beaverton"
            try laptop.contacts.update(linus)
            try await laptop.sync()
            try await dav.sync()

            let got = try await bridge.request("GET", path)
            for line in [
                "EMAIL;TYPE=work:linus@example.org", "TEL;TYPE=cell:+1 555 0111",
                "ADR:;;1 Main St;Beaverton;OR;97201;United States",
                // What was not edited comes back as it was.
                "EMAIL;TYPE=INTERNET;TYPE=HOME:linus@home.example", "item3.URL;TYPE=pref:https://kernel.org",
            ] {
                #expect(got.body.contains(line + "\r\n"), "\(line) in \(got.body)")
            }
            for gone in ["item1.", "item2.", "Nobel", "+1 555 0100", "Portland", "X-SYNCKIT"] {
                #expect(!got.body.contains(gone), "\(gone) in \(got.body)")
            }
        }
    }

    /// A card's lines, unfolded and sorted, with each name and parameter part in upper case and without
    /// quotes (vCard's names are not case sensitive, and the app writes them in upper case; it quotes a
    /// parameter value only when it must) and the value as it is.
    static func normalised(_ text: String) -> [String] {
        text.replacingOccurrences(of: "\r\n ", with: "").split(separator: "\r\n").map { line in
            guard let colon = line.firstIndex(of: ":") else { return String(line) }
            return line[..<colon].uppercased().replacingOccurrences(of: "\"", with: "") + line[colon...]
        }.sorted()
    }
}
