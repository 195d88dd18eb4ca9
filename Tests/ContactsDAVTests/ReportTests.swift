import ContactsModel
import ContactsStore
import Foundation
import SyncCore
import SyncTesting
import Testing

@testable import ContactsDAV

private let davNamespaces = "xmlns:d=\"DAV:\" xmlns:card=\"urn:ietf:params:xml:ns:carddav\""

/// addressbook-multiget, addressbook-query and sync-collection through real HTTP, and a bridge that
/// stays live: other devices' edits reach its clients' next sync, its clients' writes reach other devices
/// by push.
@Suite("CardDAV bridge: reports and sync")
struct ReportTests {
    @Test("multiget answers the hrefs it has with their cards and the others with 404")
    func multiget() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            let ada = try devices[0].contacts.add(Contact(id: .random(), name: "Ada Lovelace"))
            let alan = try devices[0].contacts.add(Contact(id: .random(), name: "Alan Turing"))
            let missing = Bridge.contacts + UUID().uuidString + ".vcf"
            let hrefs = [ada.id, alan.id].map { "<d:href>\(Bridge.contacts)\($0.uuidString).vcf</d:href>" }.joined()
            let reply = try await bridge.report(
                Bridge.contacts,
                "<card:addressbook-multiget \(davNamespaces)><d:prop><d:getetag/><card:address-data/></d:prop>\(hrefs)<d:href>\(missing)</d:href></card:addressbook-multiget>"
            )
            #expect(reply.status == 207)
            let responses = try reply.responses()
            #expect(responses.count == 3)
            #expect(
                responses[Bridge.contacts + ada.id.uuidString + ".vcf"]?.descendant(Namespace.cardDAV, "address-data")?
                    .text.contains("FN:Ada Lovelace") == true)
            #expect(responses[Bridge.contacts + alan.id.uuidString + ".vcf"]?.descendant("DAV:", "getetag") != nil)
            #expect(responses[missing]?.child("DAV:", "status")?.text.contains("404") == true)

            // Hrefs that name no card of this book, between and before the ones that do: each card still
            // comes with its own text, each other href with 404.
            let others = ["/books/elsewhere/\(ada.id.uuidString).vcf", "not a path", missing]
            let mixed =
                ([others[0], Bridge.contacts + alan.id.uuidString + ".vcf", others[1]]
                + ["http://127.0.0.1\(Bridge.contacts)\(ada.id.uuidString).vcf", others[2]])
                .map { "<d:href>\($0)</d:href>" }.joined()
            let second = try await bridge.report(
                Bridge.contacts,
                "<card:addressbook-multiget \(davNamespaces)><d:prop><card:address-data/></d:prop>\(mixed)</card:addressbook-multiget>"
            )
            let answered = try second.responses()
            func card(_ id: UUID) -> String? {
                answered[Bridge.contacts + id.uuidString + ".vcf"]?.descendant(Namespace.cardDAV, "address-data")?.text
            }
            #expect(card(ada.id)?.contains("FN:Ada Lovelace") == true, "\(second.body)")
            #expect(card(alan.id)?.contains("FN:Alan Turing") == true, "\(second.body)")
            for href in others {
                #expect(answered[href]?.child("DAV:", "status")?.text.contains("404") == true, "\(href)")
            }
        }
    }

    @Test(
        "addressbook-query: text-match on a property, allof and anyof, negation, a limit; an unknown collation is refused"
    )
    func query() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            try devices[0].contacts.add(
                Contact(id: .random(), name: "Ada Lovelace", emails: [.init(label: "", value: "ada@example.org")]))
            try devices[0].contacts.add(
                Contact(id: .random(), name: "Alan Turing", emails: [.init(label: "", value: "alan@bletchley.example")])
            )
            try devices[0].contacts.add(Contact(id: .random(), name: "Grace Hopper"))
            func names(_ filter: String, limit: String = "") async throws -> [String] {
                let reply = try await bridge.report(
                    Bridge.contacts,
                    "<card:addressbook-query \(davNamespaces)><d:prop><card:address-data/></d:prop><card:filter \(filter)</card:filter>\(limit)</card:addressbook-query>"
                )
                #expect(reply.status == 207, "\(reply.body)")
                return try reply.xml().all("DAV:", "response").compactMap { response in
                    response.descendant(Namespace.cardDAV, "address-data")?.text.split(separator: "\r\n")
                        .first { $0.hasPrefix("FN:") }.map { String($0.dropFirst(3)) }
                }.sorted()
            }
            #expect(try await names(">") == ["Ada Lovelace", "Alan Turing", "Grace Hopper"])
            #expect(
                try await names(
                    "><card:prop-filter name=\"EMAIL\"><card:text-match match-type=\"contains\">EXAMPLE.ORG</card:text-match></card:prop-filter>"
                ) == ["Ada Lovelace"])
            #expect(
                try await names(
                    "><card:prop-filter name=\"FN\"><card:text-match match-type=\"starts-with\">a</card:text-match></card:prop-filter>"
                ) == ["Ada Lovelace", "Alan Turing"])
            #expect(
                try await names("><card:prop-filter name=\"EMAIL\"><card:is-not-defined/></card:prop-filter>") == [
                    "Grace Hopper"
                ])
            #expect(
                try await names(
                    "test=\"allof\"><card:prop-filter name=\"FN\"><card:text-match match-type=\"starts-with\">a</card:text-match></card:prop-filter><card:prop-filter name=\"EMAIL\"><card:text-match negate-condition=\"yes\">example.org</card:text-match></card:prop-filter>"
                ) == ["Alan Turing"])
            #expect(
                try await names(
                    "test=\"anyof\"><card:prop-filter name=\"FN\"><card:text-match match-type=\"equals\">Grace Hopper</card:text-match></card:prop-filter><card:prop-filter name=\"EMAIL\"><card:text-match>bletchley</card:text-match></card:prop-filter>"
                ) == ["Alan Turing", "Grace Hopper"])
            #expect(try await names(">", limit: "<card:limit><card:nresults>2</card:nresults></card:limit>").count == 2)

            let refused = try await bridge.report(
                Bridge.contacts,
                "<card:addressbook-query \(davNamespaces)><d:prop><d:getetag/></d:prop><card:filter><card:prop-filter name=\"FN\"><card:text-match collation=\"i;klingon\">a</card:text-match></card:prop-filter></card:filter></card:addressbook-query>"
            )
            #expect(refused.status == 403 && refused.body.contains("supported-collation"), "\(refused.body)")
        }
    }

    @Test(
        "addressbook-query answers a page at most: the server's cap or the client's limit, marked with a 507; a bad nresults is refused"
    )
    func queryPage() async throws {
        try await withBridge(
            devices: 1,
            limits: .with { $0.queryResultLimit = 2 }
        ) { bridge, devices, _, _ in
            for name in ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Alonzo Church"] {
                try devices[0].contacts.add(Contact(id: .random(), name: name))
            }
            func query(_ filter: String, limit: String = "") async throws -> (cards: [String], cut: String?) {
                let reply = try await bridge.report(
                    Bridge.contacts,
                    "<card:addressbook-query \(davNamespaces)><d:prop><card:address-data/></d:prop><card:filter\(filter)</card:filter>\(limit)</card:addressbook-query>"
                )
                #expect(reply.status == 207, "\(reply.body)")
                let responses = try reply.responses()
                let cards = responses.values.compactMap { $0.descendant(Namespace.cardDAV, "address-data")?.text }
                let book = responses[Bridge.contacts]
                #expect(book == nil || book?.child("DAV:", "status")?.text.contains("507") == true, "\(reply.body)")
                return (cards, book?.child("DAV:", "responsedescription")?.text)
            }
            let all = try await query(">")
            #expect(all.cards.count == 2)
            #expect(all.cut?.contains("narrow the filter") == true, "\(all)")
            // Three match: two come, and none that does not.
            let withO = try await query(
                "><card:prop-filter name=\"FN\"><card:text-match>o</card:text-match></card:prop-filter>")
            #expect(withO.cards.count == 2 && !withO.cards.contains { $0.contains("Alan Turing") }, "\(withO)")
            #expect(withO.cut?.contains("narrow the filter") == true, "\(withO)")
            // Two matches fill the page without cutting it.
            let grace = try await query(
                " test=\"anyof\"><card:prop-filter name=\"FN\"><card:text-match match-type=\"equals\">Grace Hopper</card:text-match></card:prop-filter><card:prop-filter name=\"FN\"><card:text-match match-type=\"equals\">Ada Lovelace</card:text-match></card:prop-filter>"
            )
            #expect(grace.cards.count == 2 && grace.cut == nil, "\(grace)")
            let asked = try await query(">", limit: "<card:limit><card:nresults>1</card:nresults></card:limit>")
            #expect(asked.cards.count == 1 && asked.cut?.contains("as the client asked") == true, "\(asked)")

            for bad in ["0", "-1", "many"] {
                let refused = try await bridge.report(
                    Bridge.contacts,
                    "<card:addressbook-query \(davNamespaces)><d:prop><d:getetag/></d:prop><card:filter/><card:limit><card:nresults>\(bad)</card:nresults></card:limit></card:addressbook-query>"
                )
                #expect(refused.status == 400 && refused.body.contains("nresults"), "\(bad): \(refused.body)")
            }
        }
    }

    @Test(
        "sync-collection: everything at first, then changes and removals (404) since the token, truncated pages with a 507 and a token, a foreign token refused"
    )
    func syncCollection() async throws {
        try await withBridge(
            devices: 1,
            limits: .with { $0.syncPageSize = 2 }
        ) { bridge, devices, _, _ in
            let device = devices[0]
            var contacts: [Contact] = []
            for name in ["Ada", "Alan", "Grace"] {
                contacts.append(try device.contacts.add(Contact(id: .random(), name: name)))
            }
            func sync(_ token: String) async throws -> (
                members: [String: String], token: String, truncated: Bool, status: Int, body: String
            ) {
                let reply = try await bridge.report(
                    Bridge.contacts,
                    "<d:sync-collection \(davNamespaces)><d:sync-token>\(token)</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>"
                )
                guard reply.status == 207 else { return ([:], "", false, reply.status, reply.body) }
                var members: [String: String] = [:]
                var truncated = false
                for (href, response) in try reply.responses() {
                    let status = response.descendant("DAV:", "status")?.text ?? ""
                    if href == Bridge.contacts {
                        truncated = status.contains("507")
                    } else {
                        members[href] = status.contains("404") ? "removed" : "present"
                    }
                }
                return (members, try reply.first("DAV:", "sync-token")?.text ?? "", truncated, reply.status, reply.body)
            }
            // The first sync, a page at a time.
            var page = try await sync("")
            #expect(page.members.count == 2 && page.truncated)
            var seen = page.members
            page = try await sync(page.token)
            #expect(page.members.count == 1 && !page.truncated)
            seen.merge(page.members) { $1 }
            #expect(seen.count == 3 && seen.values.allSatisfy { $0 == "present" })
            let token = page.token
            #expect(try await sync(token).members.isEmpty)

            // An edit and a removal since the token.
            var ada = contacts[0]
            ada.notes = "first programmer"
            try device.contacts.update(ada)
            try device.contacts.delete(contacts[1].id)
            page = try await sync(token)
            #expect(
                page.members == [
                    Bridge.contacts + contacts[0].id.uuidString + ".vcf": "present",
                    Bridge.contacts + contacts[1].id.uuidString + ".vcf": "removed",
                ], "\(page.body)")

            // A token of another log (another device, or a log made again) is refused as RFC 6578 says.
            let foreign = try await sync("https://contacts.invalid/sync/0000000000000000/Contacts/3")
            #expect(foreign.status == 403 && foreign.body.contains("valid-sync-token"), "\(foreign.body)")
            let future = try await sync(
                token.replacingOccurrences(of: #"/\d+$"#, with: "/999999", options: .regularExpression))
            #expect(future.status == 403)
            // A token of this bridge's earlier form, which named no book, is refused: the client syncs again.
            let unbooked = try await sync(
                token.replacingOccurrences(of: #"/Contacts/(\d+)$"#, with: "-$1", options: .regularExpression))
            #expect(unbooked.status == 403 && unbooked.body.contains("valid-sync-token"), "\(unbooked.body)")
        }
    }

    @Test(
        "attack: a sync token one book gave, used on another book of the device, is refused (403 valid-sync-token), not answered without the other book's earlier cards"
    )
    func tokenOfAnotherBook() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            let device = devices[0]
            let family = try device.books.createBook(named: "Family")
            let familyPath = "/books/\(family.zoneID.zoneName)/"
            // Family's cards come first in the device's one change log; Contacts' token is later than all of them.
            _ = try device.contacts.add(Contact(id: .random(), name: "Mum"), to: family.zoneID)
            _ = try device.contacts.add(Contact(id: .random(), name: "Dad"), to: family.zoneID)
            _ = try device.contacts.add(Contact(id: .random(), name: "Ada"))
            let contactsToken = try #require(
                try await bridge.propfind(Bridge.contacts, "<d:sync-token/>").first("DAV:", "sync-token")?.text)
            let reply = try await bridge.report(
                familyPath,
                "<d:sync-collection \(davNamespaces)><d:sync-token>\(contactsToken)</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>"
            )
            #expect(reply.status == 403 && reply.body.contains("valid-sync-token"), "\(reply.status) \(reply.body)")
            // Family's own token still works, and an empty one lists both of its cards.
            let fresh = try await bridge.report(
                familyPath,
                "<d:sync-collection \(davNamespaces)><d:sync-token/><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>"
            )
            #expect(fresh.status == 207)
            #expect(try fresh.responses().keys.filter { $0.hasSuffix(".vcf") }.count == 2, "\(fresh.body)")
            let familyToken = try #require(try fresh.first("DAV:", "sync-token")?.text)
            let again = try await bridge.report(
                familyPath,
                "<d:sync-collection \(davNamespaces)><d:sync-token>\(familyToken)</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>"
            )
            #expect(again.status == 207)
            #expect(try again.responses().keys.filter { $0.hasSuffix(".vcf") }.isEmpty, "\(again.body)")
        }
    }

    @Test(
        "live: another device's edit reaches the bridge's next sync-collection by push; a client's PUT reaches the other device by push"
    )
    func live() async throws {
        try await withBridge(devices: 2, automaticallySync: true) { bridge, devices, _, _ in
            let (dav, laptop) = (devices[0], devices[1])
            func token() async throws -> String {
                try await bridge.propfind(Bridge.contacts, "<d:sync-token/>").first("DAV:", "sync-token")?.text ?? ""
            }
            let start = try await token()
            let ada = try laptop.contacts.add(Contact(id: .random(), name: "Ada Lovelace"))
            let path = Bridge.contacts + ada.id.uuidString + ".vcf"
            try await waitUntil("the laptop's new contact is in the bridge's sync-collection") {
                let reply = try await bridge.report(
                    Bridge.contacts,
                    "<d:sync-collection \(davNamespaces)><d:sync-token>\(start)</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>"
                )
                return try reply.responses().keys.contains(path)
            } observed: {
                "the bridge's device has \((try? dav.reader.contacts().map(\.name)) ?? [])"
            }
            let current = try await bridge.request("GET", path)
            let edited = current.body.replacingOccurrences(
                of: "END:VCARD", with: "NOTE:edited in a DAV client\r\nEND:VCARD")
            let reply = try await bridge.put(
                path, edited, headers: [("If-Match", try #require(current.header("ETag")))])
            #expect(reply.status == 204, "\(reply.body)")
            try await waitUntil("the client's edit is on the laptop") {
                try laptop.reader.contact(ada.id)?.notes == "edited in a DAV client"
            } observed: {
                "the laptop has notes '\((try? laptop.reader.contact(ada.id)?.notes) ?? nil ?? "")', status \(laptop.status)"
            }
        }
    }
}
