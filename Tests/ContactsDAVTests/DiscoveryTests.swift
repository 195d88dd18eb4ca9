import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import Listeners
import LocalSystem
import SyncClient
import SyncCore
import SyncServer
import SyncTesting
import Testing

@testable import ContactsDAV

/// RFC 6764 and 6352 discovery through real HTTP: the well-known URL, the principal, the home set, one
/// address book per book, and HTTP Basic with the bridge's password.
@Suite("CardDAV bridge: discovery and access")
struct DiscoveryTests {
    @Test(
        "/.well-known/carddav leads to the root; the root names the principal, the principal the home; the home lists every book"
    )
    func discovery() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            let family = try devices[0].books.createBook(named: "Family")
            var reply = try await bridge.request("GET", "/.well-known/carddav", authenticated: false)
            #expect(reply.status == 301 && reply.header("Location") == "/", "\(reply)")

            reply = try await bridge.propfind("/", "<d:current-user-principal/><card:addressbook-home-set/>")
            #expect(reply.status == 207)
            #expect(try reply.first("DAV:", "current-user-principal")?.child("DAV:", "href")?.text == "/principal/")

            reply = try await bridge.propfind("/principal/", "<card:addressbook-home-set/><d:resourcetype/>")
            #expect(
                try reply.first(Namespace.cardDAV, "addressbook-home-set")?.child("DAV:", "href")?.text == "/books/")
            #expect(try reply.first("DAV:", "resourcetype")?.child("DAV:", "principal") != nil)

            reply = try await bridge.propfind("/books/", depth: "1", "<d:displayname/><d:resourcetype/>")
            let responses = try reply.responses()
            let familyPath = "/books/\(family.zoneID.zoneName)/"
            #expect(Set(responses.keys) == ["/books/", "/books/Contacts/", familyPath], "\(responses.keys)")
            #expect(responses[familyPath]?.descendant("DAV:", "displayname")?.text == "Family")
            #expect(responses["/books/Contacts/"]?.descendant(Namespace.cardDAV, "addressbook") != nil)
        }
    }

    @Test(
        "a principal per book, for macOS Contacts (which takes the first book of a home): its home set holds that book alone, in the order macOS asks"
    )
    func principalPerBook() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            let family = try devices[0].books.createBook(named: "Family")
            _ = try devices[0].contacts.add(Contact(id: .random(), name: "Mum"), to: family.zoneID)
            let segment = family.zoneID.zoneName
            // macOS's CardDAVPlugin: the principal URL it is given, for the user and the home set.
            var reply = try await bridge.propfind(
                "/principals/\(segment)/",
                "<d:current-user-principal/><d:principal-URL/><card:addressbook-home-set/><d:displayname/><d:resourcetype/>"
            )
            #expect(reply.status == 207, "\(reply.body)")
            #expect(
                try reply.first("DAV:", "current-user-principal")?.child("DAV:", "href")?.text
                    == "/principals/\(segment)/")
            #expect(try reply.first("DAV:", "principal-URL")?.child("DAV:", "href")?.text == "/principals/\(segment)/")
            #expect(
                try reply.first(Namespace.cardDAV, "addressbook-home-set")?.child("DAV:", "href")?.text
                    == "/homes/\(segment)/")
            #expect(try reply.first("DAV:", "resourcetype")?.child("DAV:", "principal") != nil)
            // The home lists the one book, and the book serves as any book does.
            reply = try await bridge.propfind(
                "/homes/\(segment)/", depth: "1", "<d:displayname/><d:resourcetype/><cs:getctag/>")
            let responses = try reply.responses()
            #expect(Set(responses.keys) == ["/homes/\(segment)/", "/books/\(segment)/"], "\(responses.keys)")
            #expect(responses["/books/\(segment)/"]?.descendant(Namespace.cardDAV, "addressbook") != nil)
            let listing = try await bridge.propfind("/books/\(segment)/", depth: "1", "<d:getetag/>")
            #expect(try listing.responses().count == 2, "\(listing.body)")
            // The user's principal still has every book.
            reply = try await bridge.propfind("/principal/", "<card:addressbook-home-set/>")
            #expect(
                try reply.first(Namespace.cardDAV, "addressbook-home-set")?.child("DAV:", "href")?.text == "/books/")
            // The bridge's address in a browser says where each book is.
            let page = try await bridge.request("GET", "/")
            #expect(page.body.contains("Family: /books/\(segment)/") && page.body.contains("/principals/\(segment)/"))
            // A book that is not there.
            #expect(try await bridge.propfind("/principals/Nothing/", "<d:displayname/>").status == 404)
            #expect(try await bridge.propfind("/homes/Nothing/", depth: "1", "<d:displayname/>").status == 404)
        }
    }

    @Test("an address book says what it supports: reports, vCard versions, its ctag and sync token, its privileges")
    func bookProperties() async throws {
        try await withBridge(devices: 1) { bridge, devices, _, _ in
            let props =
                "<d:supported-report-set/><card:supported-address-data/><cs:getctag/><d:sync-token/><d:current-user-privilege-set/><d:unknown-thing/>"
            var reply = try await bridge.propfind(Bridge.contacts, props)
            let reports = try #require(try reply.first("DAV:", "supported-report-set"))
            #expect(reports.descendant(Namespace.cardDAV, "addressbook-query") != nil)
            #expect(reports.descendant(Namespace.cardDAV, "addressbook-multiget") != nil)
            #expect(reports.descendant("DAV:", "sync-collection") != nil)
            let versions = try #require(try reply.first(Namespace.cardDAV, "supported-address-data")).children.map {
                $0.attributes["version"] ?? ""
            }
            #expect(versions == ["3.0", "4.0"])
            #expect(try reply.first("DAV:", "current-user-privilege-set")?.descendant("DAV:", "write") != nil)
            // What the bridge does not have is listed as not found, beside what it has.
            #expect(reply.body.contains("<d:unknown-thing/></d:prop><d:status>HTTP/1.1 404 Not Found"), "\(reply.body)")
            let ctag = try reply.first(Namespace.calendarServer, "getctag")?.text
            let token = try reply.first("DAV:", "sync-token")?.text

            try devices[0].contacts.add(Contact(id: .random(), name: "Ada Lovelace"))
            reply = try await bridge.propfind(Bridge.contacts, props)
            #expect(try reply.first(Namespace.calendarServer, "getctag")?.text != ctag)
            #expect(try reply.first("DAV:", "sync-token")?.text != token)

            reply = try await bridge.request("PROPFIND", Bridge.contacts, headers: [("Depth", "infinity")])
            #expect(reply.status == 403 && reply.body.contains("propfind-finite-depth"), "\(reply.body)")
            reply = try await bridge.request(
                "PROPFIND", Bridge.contacts, body: "<d:propfind xmlns:d=\"DAV:\"><d:propname/></d:propfind>")
            #expect(reply.status == 207 && reply.body.contains("<d:sync-token/>"), "\(reply.body)")
        }
    }

    @Test(
        "a book's Depth: 1 listing is sent a page at a time: every card once, in list order, names shared across a page's edge, cards asked for, propname"
    )
    func pagedListing() async throws {
        try await withBridge(
            devices: 1,
            limits: .with { $0.listingPageSize = 2 }
        ) { bridge, devices, _, _ in
            // Three contacts of one name, so that a page ends between two of them.
            for name in ["Cy Young", "Ann Smith", "Bob Jones", "Ann Smith", "Ann Smith"] {
                try devices[0].contacts.add(Contact(id: .random(), name: name))
            }
            let family = try devices[0].books.createBook(named: "Family")
            try devices[0].contacts.add(Contact(id: .random(), name: "Aunt Elsewhere"), to: family.zoneID)

            let reply = try await bridge.propfind(Bridge.contacts, depth: "1", "<d:getetag/><card:address-data/>")
            #expect(reply.status == 207, "\(reply.body)")
            let responses = try reply.xml().all("DAV:", "response")
            let hrefs = responses.compactMap { $0.child("DAV:", "href")?.text }
            #expect(hrefs.count == 6 && Set(hrefs).count == 6 && hrefs.first == Bridge.contacts, "\(hrefs)")
            let names = responses.dropFirst().map { response in
                response.descendant(Namespace.cardDAV, "address-data")?.text.split(separator: "\r\n")
                    .first { $0.hasPrefix("FN:") }.map { String($0.dropFirst(3)) } ?? "no card"
            }
            #expect(names == ["Ann Smith", "Ann Smith", "Ann Smith", "Bob Jones", "Cy Young"], "\(reply.body)")
            #expect(responses.dropFirst().allSatisfy { $0.descendant("DAV:", "getetag") != nil })

            let propnames = try await bridge.request(
                "PROPFIND", Bridge.contacts, body: "<d:propfind xmlns:d=\"DAV:\"><d:propname/></d:propfind>",
                headers: [("Depth", "1")])
            let named = try propnames.xml().all("DAV:", "response")
            #expect(named.count == 6 && named.dropFirst().allSatisfy { $0.descendant("DAV:", "getetag") != nil })

            // An empty book lists itself alone.
            let empty = try devices[0].books.createBook(named: "Empty")
            let alone = try await bridge.propfind("/books/\(empty.zoneID.zoneName)/", depth: "1", "<d:getetag/>")
            #expect(try alone.xml().all("DAV:", "response").count == 1, "\(alone.body)")
        }
    }

    @Test("every request but discovery needs the bridge's user and password; OPTIONS says it is an address book server")
    func authentication() async throws {
        try await withBridge(devices: 1) { bridge, _, _, _ in
            var reply = try await bridge.propfind(Bridge.contacts, "<d:getetag/>")
            #expect(reply.status == 207)
            reply = try await bridge.request("PROPFIND", Bridge.contacts, authenticated: false)
            #expect(reply.status == 401)
            #expect(reply.header("WWW-Authenticate")?.hasPrefix("Basic") == true)
            #expect(reply.body.contains("contacts dav --show-credentials"))
            let wrong = Data("contacts:\(bridge.credentials.password)x".utf8).base64EncodedString()
            reply = try await bridge.request(
                "GET", Bridge.contacts + "x.vcf", headers: [("Authorization", "Basic \(wrong)")], authenticated: false)
            #expect(reply.status == 401)
            reply = try await bridge.request("OPTIONS", "/")
            #expect(reply.status == 200)
            #expect(reply.header("DAV")?.contains("addressbook") == true)
            #expect(reply.header("Allow")?.contains("REPORT") == true)
            reply = try await bridge.request("MKCOL", "/books/New/")
            #expect(reply.status == 403 && reply.body.contains("contacts book create"), "\(reply.body)")
            reply = try await bridge.request("PATCH", Bridge.contacts)
            #expect(reply.status == 405)
            reply = try await bridge.request("GET", "/elsewhere/x")
            #expect(reply.status == 404)
        }
    }

    @Test("the password is made once, kept 0600, read back the same; deleting its file replaces it")
    func credentialsFile() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory + "/devices", withIntermediateDirectories: true)
            let first = try BridgeCredentials.load(dataDirectory: directory, device: "dav")
            let again = try BridgeCredentials.load(dataDirectory: directory, device: "dav")
            #expect(first == again)
            #expect(first.password.count == 32)
            let path = BridgeCredentials.path(dataDirectory: directory, device: "dav")
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(try BridgeCredentials.load(dataDirectory: directory, device: "other") != first)
            // A password that got out: deleting its file makes a new one, and the old one opens nothing.
            try FileManager.default.removeItem(atPath: path)
            let replaced = try BridgeCredentials.load(dataDirectory: directory, device: "dav")
            let old = "Basic " + Data("contacts:\(first.password)".utf8).base64EncodedString()
            #expect(replaced != first && !replaced.accepts(authorization: old))
            #expect(
                replaced.accepts(
                    authorization: "Basic " + Data("contacts:\(replaced.password)".utf8).base64EncodedString()))
        }
    }

    @Test("any address beyond loopback is refused without TLS; a loopback one is listened on as the address checked")
    func loopbackOnly() throws {
        for host in ["0.0.0.0", "192.168.1.4", "::", "0", "::ffff:10.0.0.1"] {
            #expect(throws: BridgeError.self, "\(host)") {
                try DAVServer(address: .init(host: host, port: 5233), tls: nil)
            }
        }
        for (host, bound) in [
            ("127.0.0.1", "127.0.0.1"), ("::1", "::1"), ("127.1", "127.0.0.1"), ("127.3.2.1", "127.3.2.1"),
            ("::ffff:127.0.0.1", "::ffff:127.0.0.1"),
        ] {
            #expect(try DAVServer(address: .init(host: host, port: 5233), tls: nil).address.host == bound, "\(host)")
        }
        let localhost = try DAVServer(address: .init(host: "localhost", port: 5233), tls: nil)
        #expect(HostAddresses.isLoopback(numeric: localhost.address.host), "\(localhost.address)")
    }

    @Test(
        "attack: a name that looks like loopback ('127.' and four parts) is decided by what it resolves to: 0.0.0.0, a mix, or nothing is refused"
    )
    func loopbackByAddress() throws {
        let name = "127.lan.example.test"
        func server(_ answer: [String]) throws -> DAVServer {
            try DAVServer(address: .init(host: name, port: 5233), tls: nil) { asked in asked == name ? answer : [] }
        }
        do {
            _ = try server(["0.0.0.0"])
            Issue.record("a name resolving to 0.0.0.0 was listened on without TLS")
        } catch let error as BridgeError {
            #expect(error.description.contains("which is 0.0.0.0"), "\(error)")
        }
        #expect(throws: BridgeError.self) { try server(["127.0.0.1", "192.168.1.4"]) }
        #expect(throws: BridgeError.self) { try server([]) }
        #expect(try server(["127.0.0.1", "::1"]).address.host == "127.0.0.1")
        // With TLS any address is allowed, and kept as given.
        let tls = TLSFiles(certificatePath: "cert.pem", keyPath: "key.pem")
        #expect(try DAVServer(address: .init(host: name, port: 5233), tls: tls).address.host == name)
    }
}
