import ContactsModel
import ContactsStore
import Foundation
import Testing

@testable import ContactsDAV

/// What an attacker (or a broken client) sends: each answered with the right 4xx and a sentence, nothing
/// stored, and the bridge still serving.
@Suite("CardDAV bridge: hostile input")
struct HostileInputTests {
    /// The bridge still answers, and the device holds only `names`.
    private func stillServing(_ bridge: Bridge, names: [String] = []) async throws {
        let reply = try await bridge.propfind(Bridge.contacts, "<d:getetag/>")
        #expect(reply.status == 207)
        #expect(try bridge.device.reader.contacts().map(\.name) == names)
    }

    @Test("malformed XML, entity expansion (billion laughs), external entities and deep nesting are 400")
    func xml() async throws {
        try await withBridge(devices: 1) { bridge, _, _, _ in
            let laughs = """
                <?xml version="1.0"?>
                <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
                <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
                <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
                <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
                <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
                <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
                <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
                <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
                <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">]>
                <d:propfind xmlns:d="DAV:"><d:prop><d:displayname>&lol9;</d:displayname></d:prop></d:propfind>
                """
            let external = """
                <?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>
                <d:propfind xmlns:d="DAV:"><d:prop><d:displayname>&x;</d:displayname></d:prop></d:propfind>
                """
            let deep = String(repeating: "<d:a xmlns:d=\"DAV:\">", count: 200) + String(repeating: "</d:a>", count: 200)
            for body in [
                "<d:propfind xmlns:d=\"DAV:\"><d:prop></d:propfind>", "not xml at all", laughs, external, deep,
            ] {
                let reply = try await bridge.request("PROPFIND", Bridge.contacts, body: body)
                #expect(reply.status == 400, "\(body.prefix(60)): \(reply.status) \(reply.body)")
                #expect(!reply.body.contains("root:"), "no file's contents in the answer")
            }
            let report = try await bridge.report(Bridge.contacts, "<d:sync-collection xmlns:d=\"DAV:\"><d:sync-token>")
            #expect(report.status == 400)
            try await stillServing(bridge)
        }
    }

    @Test(
        "attack: a document type in UTF-16 (with or without a byte order mark), UTF-32 or a declared UTF-7 is refused before parsing (415); UTF-8 with a byte order mark is read"
    )
    func xmlInOtherEncodings() async throws {
        try await withBridge(devices: 1) { bridge, _, _, _ in
            // An internal entity that would turn the answer into vCard 4.0 if it were expanded.
            let entity = """
                <?xml version="1.0" encoding="UTF-16"?><!DOCTYPE r [<!ENTITY v "4.0">]>
                <card:addressbook-query xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop>\
                <card:address-data content-type="text/vcard" version="&v;"/></d:prop></card:addressbook-query>
                """
            func utf16(_ text: String, bigEndian: Bool) -> [UInt8] {
                text.utf16.flatMap { unit in
                    bigEndian ? [UInt8(unit >> 8), UInt8(unit & 0xFF)] : [UInt8(unit & 0xFF), UInt8(unit >> 8)]
                }
            }
            let utf32 = entity.unicodeScalars.flatMap { scalar in
                withUnsafeBytes(of: scalar.value.littleEndian, Array.init)
            }
            let utf7 = """
                <?xml version="1.0" encoding="UTF-7"?>+ADw-!DOCTYPE r +AFs-+ADw-!ENTITY v +ACI-4.0+ACI-+AD4-+AF0-+AD4-
                <d:propfind xmlns:d="DAV:"><d:prop><d:displayname/></d:prop></d:propfind>
                """
            let latin1 = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><d:propfind xmlns:d=\"DAV:\"/>"
            let bodies: [(String, [UInt8])] = [
                ("UTF-16LE with a byte order mark", [0xFF, 0xFE] + utf16(entity, bigEndian: false)),
                ("UTF-16BE with a byte order mark", [0xFE, 0xFF] + utf16(entity, bigEndian: true)),
                ("UTF-16LE without one", utf16(entity, bigEndian: false)),
                ("UTF-32LE", [0xFF, 0xFE, 0x00, 0x00] + utf32),
                ("UTF-7, declared", Array(utf7.utf8)),
                ("ISO-8859-1, declared", Array(latin1.utf8)),
            ]
            for (what, bytes) in bodies {
                let reply = try await bridge.request(
                    "REPORT", Bridge.contacts, bytes: bytes, headers: [("Depth", "1")])
                #expect(reply.status == 415, "\(what): \(reply.status) \(reply.body)")
                #expect(reply.body.contains("send it in UTF-8"), "\(what): \(reply.body)")
                #expect(!reply.body.contains("VERSION:4.0"), "\(what): the entity was never expanded")
            }
            // A byte order mark before UTF-8 is how some clients write it: read as usual.
            let marked = try await bridge.request(
                "PROPFIND", Bridge.contacts,
                bytes: [0xEF, 0xBB, 0xBF]
                    + Array(
                        "<?xml version=\"1.0\" encoding=\"utf-8\"?><d:propfind xmlns:d=\"DAV:\"><d:prop><d:displayname/></d:prop></d:propfind>"
                            .utf8), headers: [("Depth", "0")])
            #expect(marked.status == 207, "\(marked.status) \(marked.body)")
            try await stillServing(bridge)
        }
    }

    @Test("bodies beyond the limits are 413; nothing is stored")
    func huge() async throws {
        try await withBridge(
            devices: 1,
            limits: {
                var limits = DAVBridge.Limits()
                limits.maximumResourceBytes = 64 << 10
                limits.maximumXMLBytes = 16 << 10
                return limits
            }()
        ) { bridge, _, _, _ in
            let bigCard = card(["UID:big", "FN:Big", "NOTE:" + String(repeating: "x", count: 100_000)])
            var reply = try await bridge.put(Bridge.contacts + "big.vcf", bigCard)
            #expect(reply.status == 413, "\(reply.body)")
            let bigXML =
                "<d:propfind xmlns:d=\"DAV:\"><d:prop>" + String(repeating: "<d:getetag/>", count: 5_000)
                + "</d:prop></d:propfind>"
            reply = try await bridge.request("PROPFIND", Bridge.contacts, body: bigXML)
            #expect(reply.status == 413)
            // Chunked, with no length to refuse up front: cut off at the limit as it arrives.
            reply = try await bridge.request(
                "PUT", Bridge.contacts + "chunked.vcf", chunked: bigCard, headers: [("Content-Type", "text/vcard")])
            #expect(reply.status == 413, "\(reply.body)")
            try await stillServing(bridge)
        }
    }

    @Test("path traversal, encoded slashes and control characters in names are 400; unknown books 404")
    func paths() async throws {
        try await withBridge(devices: 1) { bridge, _, _, _ in
            for path in [
                "/books/Contacts/..%2F..%2Fetc%2Fpasswd", "/books/Contacts/%2e%2e", "/books/%2e%2e/x.vcf",
                "/books/Contacts/a%00b.vcf", "/books/Contacts/a%0Ab.vcf",
            ] {
                let reply = try await bridge.put(path, card(["UID:t", "FN:Traveller"]))
                #expect(reply.status == 400, "\(path): \(reply.status) \(reply.body)")
            }
            var reply = try await bridge.put("/books/NoSuchBook/x.vcf", card(["UID:t", "FN:Traveller"]))
            #expect(reply.status == 404)
            reply = try await bridge.put(
                "/books/Contacts/" + String(repeating: "a", count: 300) + ".vcf", card(["UID:t", "FN:Traveller"]))
            #expect(reply.status == 400)
            try await stillServing(bridge)
        }
    }

    @Test("cards that are not vCards, not one, not UTF-8, or carry control characters are refused with a reason")
    func cards() async throws {
        try await withBridge(devices: 1) { bridge, _, _, _ in
            let cases: [(String, Int, String)] = [
                ("just some text", 400, "vCard"),
                (card(["UID:a", "FN:One"]) + card(["UID:b", "FN:Two"]), 400, "exactly one vCard"),
                (card(["UID:c", "FN:Bell\u{07}Ringer"]), 403, "control"),
                (card(["UID:d", "EMAIL:not-an-address"]), 403, "name"),
            ]
            for (body, status, words) in cases {
                let reply = try await bridge.put(Bridge.contacts + "x.vcf", body)
                #expect(
                    reply.status == status && reply.body.contains(words),
                    "\(body.prefix(40)): \(reply.status) \(reply.body)")
            }
            var request = try await bridge.request(
                "PUT", Bridge.contacts + "x.vcf", body: "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:\u{FFFD}\r\nEND:VCARD\r\n",
                headers: [("Content-Type", "application/json")])
            #expect(request.status == 415)
            request = try await bridge.request(
                "PUT", Bridge.contacts + "x.vcf", body: nil, headers: [("Content-Type", "text/vcard")])
            #expect(request.status == 400)
            try await stillServing(bridge)
        }
    }
}
