import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncClient
import Testing
import VCard

@testable import ContactsDAV

/// Groups as cards of their own, as the iPhone, macOS Contacts and DAVx5 write them (Apple's
/// `X-ADDRESSBOOKSERVER-KIND:group` with `X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:…`, from the report
/// and Apple's exports; vCard 4's `KIND:group` with `MEMBER`, RFC 6350 §6.1.4 and §6.6.5, as DAVx5 writes
/// them), PUT through real HTTP with those clients' User-Agents: the members' groups on every device, and
/// back as cards, while a client of `CATEGORIES` sees no group card.
@Suite("CardDAV bridge: group cards")
struct GroupCardTests {
    static let iPhone = [("User-Agent", "iOS/18.1 (22B83) dataaccessd/1.0")]
    static let davx5 = [("User-Agent", "DAVx5/4.4.3-ose (2024/10/01; dav4jvm; okhttp/4.12.0) Android/14")]
    static let ada = "1B4E28BA-2FA1-11D2-883F-0016D3CCA427"
    static let bob = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
    static let club = "A1B2C3D4-0000-4000-8000-000000000001"

    static func appleGroup(_ name: String, members: [String]) -> String {
        card(
            ["PRODID:-//Apple Inc.//iPhone OS 18.1//EN", "N:\(name)", "FN:\(name)", "X-ADDRESSBOOKSERVER-KIND:group"]
                + members.map { "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:\($0)" } + ["UID:\(club)"])
    }

    /// A sync-collection with `headers`: each member's href with "present" or "removed", and the new token.
    static func syncCollection(_ bridge: Bridge, _ token: String, headers: [(String, String)]) async throws -> (
        members: [String: String], token: String
    ) {
        let reply = try await bridge.request(
            "REPORT", Bridge.contacts,
            body:
                "<d:sync-collection xmlns:d=\"DAV:\"><d:sync-token>\(token)</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>",
            headers: [("Depth", "1")] + headers)
        #expect(reply.status == 207, "\(reply.body)")
        var members: [String: String] = [:]
        for (href, response) in try reply.responses() where href != Bridge.contacts {
            members[href] = (response.descendant("DAV:", "status")?.text ?? "").contains("404") ? "removed" : "present"
        }
        return (members, try reply.first("DAV:", "sync-token")?.text ?? "")
    }

    @Test(
        "an iPhone's group card puts its members in the group on every device, and no contact is named like it; renamed, re-membered and deleted on the phone, the group follows"
    )
    func groupFromThePhone() async throws {
        try await withBridge(devices: 2) { bridge, devices, _, _ in
            let (dav, laptop) = (devices[0], devices[1])
            for (uid, name) in [(Self.ada, "Ada Lovelace"), (Self.bob, "Bob Stone")] {
                let reply = try await bridge.put(
                    Bridge.contacts + uid + ".vcf", card(["UID:\(uid)", "FN:\(name)"]), headers: Self.iPhone)
                #expect(reply.status == 201, "\(reply.body)")
            }
            let path = Bridge.contacts + Self.club + ".vcf"
            var reply = try await bridge.put(
                path, Self.appleGroup("Chess Club", members: [Self.ada, Self.bob]),
                headers: Self.iPhone + [("If-None-Match", "*")])
            #expect(reply.status == 201 && reply.header("ETag") == nil, "\(reply.body)")
            try await dav.sync()
            try await laptop.sync()
            var contacts = try laptop.reader.contacts()
            #expect(contacts.map(\.name).sorted() == ["Ada Lovelace", "Bob Stone"], "\(contacts.map(\.name))")
            #expect(contacts.allSatisfy { $0.groups == ["Chess Club"] }, "\(contacts.map(\.groups))")

            // The phone reads its group back where it put it; a client of CATEGORIES is not shown it.
            reply = try await bridge.request("GET", path, headers: Self.iPhone)
            #expect(reply.status == 200, "\(reply.body)")
            for line in [
                "FN:Chess Club", "UID:\(Self.club)", "X-ADDRESSBOOKSERVER-KIND:group",
                "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:\(Self.ada)", "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:\(Self.bob)",
            ] {
                #expect(reply.body.contains(line + "\r\n"), "\(line) in \(reply.body)")
            }
            #expect(try await bridge.request("GET", path).status == 404)
            // A member's card, to the phone, has no CATEGORIES; written back without them, it keeps its group.
            let adaPath = Bridge.contacts + Self.ada + ".vcf"
            let adaCard = try await bridge.request("GET", adaPath, headers: Self.iPhone)
            #expect(!adaCard.body.contains("CATEGORIES"), "\(adaCard.body)")
            reply = try await bridge.put(
                adaPath, adaCard.body.replacingOccurrences(of: "END:VCARD", with: "NOTE:plays white\r\nEND:VCARD"),
                headers: Self.iPhone)
            #expect(reply.status == 204, "\(reply.body)")
            #expect(try dav.reader.contacts().first { $0.name == "Ada Lovelace" }?.groups == ["Chess Club"])

            // Renamed, and Bob taken out, on the phone.
            reply = try await bridge.put(
                path, Self.appleGroup("Chess Society", members: [Self.ada]), headers: Self.iPhone)
            #expect(reply.status == 204, "\(reply.body)")
            try await dav.sync()
            try await laptop.sync()
            contacts = try laptop.reader.contacts()
            #expect(
                contacts.map { "\($0.name): \($0.groups)" }.sorted()
                    == ["Ada Lovelace: [\"Chess Society\"]", "Bob Stone: []"], "\(contacts.map(\.groups))")
            reply = try await bridge.request("GET", path, headers: Self.iPhone)
            #expect(
                reply.body.contains("FN:Chess Society\r\n") && !reply.body.contains(Self.bob), "\(reply.body)")

            // Deleted on the phone: nobody is in it, and its card is gone.
            reply = try await bridge.request("DELETE", path, headers: Self.iPhone)
            #expect(reply.status == 204, "\(reply.body)")
            try await dav.sync()
            try await laptop.sync()
            #expect(try laptop.reader.contacts().allSatisfy { $0.groups.isEmpty })
            #expect(try await bridge.request("GET", path, headers: Self.iPhone).status == 404)
        }
    }

    @Test(
        "a group made and joined in the app reaches the phone as a card, reported by sync-collection when its members change and as removed when it empties; a client of CATEGORIES sees none"
    )
    func groupFromTheApp() async throws {
        try await withBridge(devices: 2) { bridge, devices, _, _ in
            let (dav, laptop) = (devices[0], devices[1])
            let ada = try laptop.contacts.add(Contact(id: .random(), name: "Ada Lovelace", groups: ["Climbing"]))
            var bob = try laptop.contacts.add(Contact(id: .random(), name: "Bob Stone"))
            try await laptop.sync()
            try await dav.sync()
            var phone = try await Self.syncCollection(bridge, "", headers: Self.iPhone)
            let cards = phone.members.keys.filter {
                ![ada.id, bob.id].map { Bridge.contacts + $0.uuidString + ".vcf" }.contains($0)
            }
            #expect(phone.members.count == 3 && cards.count == 1, "\(phone.members)")
            let groupPath = try #require(cards.first)
            var group = try await bridge.request("GET", groupPath, headers: Self.iPhone)
            #expect(
                group.body.contains("FN:Climbing\r\n")
                    && group.body.contains("X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:\(ada.id.uuidString)\r\n")
                    && !group.body.contains(bob.id.uuidString), "\(group.body)")
            let etag = try #require(group.header("ETag"))
            // vCard 4 for DAVx5.
            let v4 = try await bridge.request(
                "GET", groupPath, headers: Self.davx5 + [("Accept", "text/vcard; version=4.0")])
            #expect(
                v4.body.contains("KIND:group\r\n") && v4.body.contains("MEMBER:urn:uuid:\(ada.id.uuidString)\r\n"),
                "\(v4.body)")
            // A client of CATEGORIES: no group card, and the members' CATEGORIES.
            let khard = try await Self.syncCollection(bridge, "", headers: [])
            #expect(khard.members.count == 2 && khard.members[groupPath] == nil, "\(khard.members)")
            let adaCard = try await bridge.request("GET", Bridge.contacts + ada.id.uuidString + ".vcf")
            #expect(adaCard.body.contains("CATEGORIES:Climbing"), "\(adaCard.body)")

            // Bob joins in the app: the phone's next sync reports him and the group's card, changed.
            bob.groups = ["Climbing"]
            bob = try laptop.contacts.update(bob)
            try await laptop.sync()
            try await dav.sync()
            let token = phone.token
            phone = try await Self.syncCollection(bridge, token, headers: Self.iPhone)
            #expect(phone.members[groupPath] == "present", "\(phone.members)")
            group = try await bridge.request("GET", groupPath, headers: Self.iPhone)
            #expect(group.header("ETag") != etag && group.body.contains(bob.id.uuidString), "\(group.body)")
            #expect(try await Self.syncCollection(bridge, khard.token, headers: []).members[groupPath] == nil)

            // Both leave it: the card is reported removed.
            for var contact in try laptop.reader.contacts() {
                contact.groups = []
                try laptop.contacts.update(contact)
            }
            try await laptop.sync()
            try await dav.sync()
            phone = try await Self.syncCollection(bridge, phone.token, headers: Self.iPhone)
            #expect(phone.members[groupPath] == "removed", "\(phone.members)")
        }
    }

    @Test(
        "DAVx5's vCard 4 group card names a member that arrives after it: the member joins when it comes; a group card written where a contact is, or without a name, is refused"
    )
    func memberAfterItsGroup() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            let dav = devices[0]
            let member = "7c4d0f0a-9b1e-4c55-8d2a-3f6e1b2c9d10"
            let groupCard = card(
                [
                    "PRODID:+//IDN bitfire.at//DAVx5/4.4.3-ose ez-vcard/0.12.1", "UID:2f0e4e1c-group-0001",
                    "FN:Family", "N:Family;;;;", "KIND:group", "MEMBER:urn:uuid:\(member)",
                ], version: "4.0")
            var reply = try await bridge.put(Bridge.contacts + "family.vcf", groupCard, headers: Self.davx5)
            #expect(reply.status == 201, "\(reply.body)")
            #expect(try dav.reader.contacts().isEmpty)
            reply = try await bridge.put(
                Bridge.contacts + "mum.vcf", card(["UID:\(member)", "FN:Mum"], version: "4.0"), headers: Self.davx5)
            #expect(reply.status == 201, "\(reply.body)")
            #expect(try dav.reader.contacts().map(\.groups) == [["Family"]])
            let group = try await bridge.request("GET", Bridge.contacts + "family.vcf", headers: Self.davx5)
            #expect(group.body.contains("MEMBER:urn:uuid:\(member)") && group.body.contains("UID:2f0e4e1c-group-0001"))

            reply = try await bridge.put(Bridge.contacts + "mum.vcf", groupCard, headers: Self.davx5)
            #expect(reply.status == 409, "\(reply.body)")
            reply = try await bridge.put(
                Bridge.contacts + "nameless.vcf", card(["UID:g-2", "FN:", "KIND:group"], version: "4.0"),
                headers: Self.davx5)
            #expect(reply.status == 403, "\(reply.body)")
            // A name the app would refuse typed (a terminal escape) is refused, and nobody's groups change.
            reply = try await bridge.put(
                Bridge.contacts + "family.vcf",
                card(
                    [
                        "UID:2f0e4e1c-group-0001", "FN:Fam\u{1B}]0;owned\u{07}ily", "KIND:group",
                        "MEMBER:urn:uuid:\(member)",
                    ], version: "4.0"), headers: Self.davx5)
            #expect(reply.status == 403, "\(reply.body)")
            #expect(try dav.reader.contacts().map(\.name) == ["Mum"])
            #expect(try dav.reader.contacts().map(\.groups) == [["Family"]])
        }
    }

    @Test(
        "an Evolution contact list makes its members a group, shown to Evolution as their CATEGORIES, never a person named like the list"
    )
    func evolutionList() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            let dav = devices[0]
            let evolution = [("User-Agent", "Evolution/3.46.4")]
            var reply = try await bridge.put(
                Bridge.contacts + "grace.vcf", card(ClientCardTests.evolution), headers: evolution)
            #expect(reply.status == 201, "\(reply.body)")
            reply = try await bridge.put(
                Bridge.contacts + "list.vcf",
                card([
                    "UID:pas-id-LIST0001", "FN:Book Club", "N:Book Club;;;;", "X-EVOLUTION-LIST:TRUE",
                    "X-EVOLUTION-LIST-SHOW-ADDRESSES:FALSE",
                    "EMAIL;X-EVOLUTION-DEST-CONTACT-UID=pas-id-5F1A2B3C00000001;X-EVOLUTION-DEST-EMAIL=grace@example.org;X-EVOLUTION-DEST-NAME=Grace Hopper;X-EVOLUTION-DEST-HTML-MAIL=FALSE:Grace Hopper <grace@example.org>",
                ]), headers: evolution)
            #expect(reply.status == 201, "\(reply.body)")
            #expect(try dav.reader.contacts().map { "\($0.name): \($0.groups)" } == ["Grace Hopper: [\"Book Club\"]"])
            let grace = try await bridge.request("GET", Bridge.contacts + "grace.vcf", headers: evolution)
            #expect(grace.body.contains("CATEGORIES:Book Club\r\n"), "\(grace.body)")
            #expect(try await bridge.request("GET", Bridge.contacts + "list.vcf", headers: evolution).status == 404)
        }
    }

    @Test("a group card an earlier version kept as a contact becomes the group when the phone writes it again")
    func groupKeptAsAContactBefore() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            let dav = devices[0]
            let reply = try await bridge.put(
                Bridge.contacts + Self.ada + ".vcf", card(["UID:\(Self.ada)", "FN:Ada Lovelace"]), headers: Self.iPhone)
            #expect(reply.status == 201, "\(reply.body)")
            // What 0.3 made of the phone's group card: a contact named like the group, at the card's address.
            let old = try #require(
                VCardParser.parse(Data(Self.appleGroup("Chess Club", members: [Self.ada]).utf8)).cards.first)
            try dav.contacts.add(Contact(vCard: old))
            #expect(try dav.reader.contacts().map(\.name).sorted() == ["Ada Lovelace", "Chess Club"])
            let path = Bridge.contacts + Self.club + ".vcf"
            let again = try await bridge.put(
                path, Self.appleGroup("Chess Club", members: [Self.ada]), headers: Self.iPhone)
            #expect(again.status == 204, "\(again.body)")
            #expect(try dav.reader.contacts().map { "\($0.name): \($0.groups)" } == ["Ada Lovelace: [\"Chess Club\"]"])
            let group = try await bridge.request("GET", path, headers: Self.iPhone)
            #expect(group.body.contains("X-ADDRESSBOOKSERVER-KIND:group") && group.body.contains("UID:\(Self.club)"))
        }
    }
}
