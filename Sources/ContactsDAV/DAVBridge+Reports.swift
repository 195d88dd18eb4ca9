import ContactsModel
import ContactsStore
import Foundation
import HTTPTypes
import Hummingbird
import VCard

extension DAVBridge {
    /// REPORT on a book: addressbook-multiget, addressbook-query, sync-collection.
    func report(_ path: DAVPath, _ request: Request) async throws -> Response {
        guard case .book(let segment) = path else {
            throw DAVError(
                .forbidden, "REPORTs are answered by address books (\(DAVPath.homePath)<book>/)",
                condition: (Namespace.dav, "supported-report", nil))
        }
        let book = try book(segment)
        let style = groupStyle(request)
        try prepare(book, for: style)
        guard let body = try await xmlBody(request) else {
            throw DAVError(.badRequest, "a REPORT needs a body saying which report")
        }
        let asked = try PropertyRequest(
            propfind: body.child(Namespace.dav, "prop").map {
                XMLNode(namespace: Namespace.dav, name: "propfind", children: [$0])
            })
        let version = Self.version(requested: body.child(Namespace.dav, "prop"), request)
        switch (body.namespace, body.name) {
        case (Namespace.cardDAV, "addressbook-multiget"):
            return try await multiget(book, body, asked, version, style)
        case (Namespace.cardDAV, "addressbook-query"):
            return try await query(book, body, asked, version, style)
        case (Namespace.dav, "sync-collection"):
            return try await syncCollection(book, body, asked, version, style)
        default:
            throw DAVError(
                .forbidden,
                "the report \(body.name) is not supported; address books answer addressbook-multiget, addressbook-query and sync-collection",
                condition: (Namespace.dav, "supported-report", nil))
        }
    }

    /// The version `address-data` asks for (its `version` attribute), else the `Accept` header's.
    static func version(requested prop: XMLNode?, _ request: Request) -> VCard.Version {
        if let addressData = prop?.child(Namespace.cardDAV, "address-data"),
            let version = addressData.attributes["version"]
        {
            return version == "4.0" ? .v4 : .v3
        }
        return Self.version(request)
    }

    private func multiget(
        _ book: AddressBook, _ body: XMLNode, _ asked: PropertyRequest, _ version: VCard.Version, _ style: GroupStyle
    ) async throws -> Response {
        let hrefs = body.all(Namespace.dav, "href").map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }
        // Each card looked up by its name, all in one read: a client's first download asks for thousands,
        // and the book may hold a million.
        let names = hrefs.map { href -> String? in
            // A client may send the path or the whole URL.
            let path = href.hasPrefix("/") ? href : URL(string: href)?.path ?? href
            guard case .resource(let segment, let name)? = try? DAVPath(requestPath: path),
                segment == DAVPath.segment(of: book.zoneID)
            else { return nil }
            return name
        }
        // One answer for each name that is a card of this book, in their order.
        var looked = try device.interchange.changeLog.members(named: names.compactMap { $0 }, in: book.zoneID)
            .makeIterator()
        let hidden = try hiddenIDs(in: book, for: style)
        var found: [LoggedMember] = []
        var missing: [String] = []
        for (href, name) in zip(hrefs, names) {
            let member = name == nil ? nil : looked.next() ?? nil
            guard let member, member.present, !hidden.contains(member.id) else {
                missing.append(href)
                continue
            }
            found.append(member)
        }
        var writer = XMLWriter()
        writer.root(Namespace.dav, "multistatus")
        try await writeMembers(found, of: book, asked, version, style, into: &writer)
        for href in missing {
            writer.start(Namespace.dav, "response")
            writer.href(href)
            writer.status(404, "Not Found")
            writer.end()
        }
        writer.end()
        return Self.xml(.multiStatus, writer)
    }

    private func query(
        _ book: AddressBook, _ body: XMLNode, _ asked: PropertyRequest, _ version: VCard.Version, _ style: GroupStyle
    ) async throws -> Response {
        let filter = try AddressBookFilter(body.child(Namespace.cardDAV, "filter"))
        var limit: Int?
        if let nresults = body.child(Namespace.cardDAV, "limit")?.child(Namespace.cardDAV, "nresults") {
            let text = nresults.text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let count = Int(text), count > 0 else {
                throw DAVError(.badRequest, "nresults is a whole number above 0, not '\(text)'")
            }
            limit = count
        }
        // At most a page of members is read: a book may hold a million, and a query names few.
        let cap = min(limit ?? .max, limits.queryResultLimit)
        var matching: [LoggedMember]
        if filter.propertyFilters.isEmpty {
            matching = try device.interchange.changeLog.members(of: book.zoneID, limit: cap < .max ? cap + 1 : nil)
        } else {
            // The book's contacts one at a time, until one more than the page matches.
            var ids: [UUID] = []
            try device.reader.forEachContact(in: book.zoneID) { contact in
                if filter.matches(contact.vCard(version: version)) { ids.append(contact.id) }
                return ids.count <= cap
            }
            matching = try device.interchange.changeLog.members(ids, in: book.zoneID).compactMap { $0 }
        }
        let truncated = matching.count > cap
        if truncated { matching.removeLast(matching.count - cap) }
        var writer = XMLWriter()
        writer.root(Namespace.dav, "multistatus")
        try await writeMembers(matching, of: book, asked, version, style, into: &writer)
        if truncated {
            writeTruncated(
                book,
                cap == limit
                    ? "only the first \(cap) matches, as the client asked"
                    : "only the first \(cap) matches, the most one answer lists: narrow the filter for the rest",
                into: &writer)
        }
        writer.end()
        return Self.xml(.multiStatus, writer)
    }

    /// RFC 6578: the members changed since the token (all present ones for an empty token), removals as
    /// 404; at most a page, then a 507 on the book and the token of the last change listed, so the client
    /// asks again for the rest.
    private func syncCollection(
        _ book: AddressBook, _ body: XMLNode, _ asked: PropertyRequest, _ version: VCard.Version, _ style: GroupStyle
    ) async throws -> Response {
        let tokenText =
            body.child(Namespace.dav, "sync-token")?.text.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let latest = try device.interchange.changeLog.latestChange(in: book.zoneID)
        let after: Int64
        if tokenText.isEmpty {
            after = 0
        } else {
            guard let change = change(ofSyncToken: tokenText, of: book), change <= latest else {
                throw DAVError(
                    .forbidden,
                    "the sync token is not one this address book gave (another book's, or its device's change log was rebuilt): sync again without a token",
                    condition: (Namespace.dav, "valid-sync-token", nil))
            }
            after = change
        }
        if let level = body.child(Namespace.dav, "sync-level")?.text.trimmingCharacters(in: .whitespaces),
            level != "1", level != "infinite"
        {
            throw DAVError(.badRequest, "sync-level is 1 or infinite, not '\(level)'")
        }
        var page = limits.syncPageSize
        if let nresults = body.child(Namespace.dav, "limit")?.child(Namespace.dav, "nresults").flatMap({
            Int($0.text.trimmingCharacters(in: .whitespaces))
        }), nresults > 0 {
            page = min(page, nresults)
        }
        var changes = try device.interchange.changeLog.changes(in: book.zoneID, after: after, limit: page + 1)
        let truncated = changes.count > page
        if truncated { changes.removeLast() }
        let token = truncated ? changes.last?.change ?? after : latest
        // An empty token lists what is there; removals matter only to a client that had them. Group cards
        // only to a client of group cards.
        let hidden = try hiddenIDs(in: book, for: style)
        let listed = (tokenText.isEmpty ? changes.filter(\.present) : changes).filter { !hidden.contains($0.id) }
        var writer = XMLWriter()
        writer.root(Namespace.dav, "multistatus")
        try await writeMembers(listed.filter(\.present), of: book, asked, version, style, into: &writer)
        for member in listed where !member.present { writeRemoved(book, member, into: &writer) }
        if truncated {
            writeTruncated(book, "more changes follow: ask again with this answer's sync token", into: &writer)
        }
        writer.element(Namespace.dav, "sync-token", syncToken(token, of: book))
        writer.end()
        return Self.xml(.multiStatus, writer)
    }

    /// The members' responses, with their cards when the request asked for `address-data`.
    private func writeMembers(
        _ members: [LoggedMember], of book: AddressBook, _ asked: PropertyRequest, _ version: VCard.Version,
        _ style: GroupStyle, into writer: inout XMLWriter
    ) async throws {
        let cards =
            asked.wantsAddressData ? try await cardTexts(members, in: book, version: version, style: style) : [:]
        for member in members {
            writeResponse(
                .member(book, member, card: cards[member.id]),
                properties: asked.properties(of: .member(book, member, card: nil)), into: &writer)
        }
    }

    /// RFC 6578 §3.6's marker of an answer cut short: a 507 on the book.
    private func writeTruncated(_ book: AddressBook, _ why: String, into writer: inout XMLWriter) {
        writer.start(Namespace.dav, "response")
        writer.href(DAVPath.book(DAVPath.segment(of: book.zoneID)).path)
        writer.status(507, "Insufficient Storage")
        writer.element(Namespace.dav, "responsedescription", why)
        writer.end()
    }
}
