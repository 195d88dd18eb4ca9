import ContactsModel
import ContactsStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VCard

extension DAVBridge {
    func get(_ path: DAVPath, _ request: Request, head: Bool) async throws -> Response {
        guard case .resource(let segment, let name) = path else {
            if case .book = path {
                throw DAVError(
                    .methodNotAllowed, "an address book is read with PROPFIND or REPORT; its contacts with GET")
            }
            // What a person who opens the bridge's address in a browser needs: where each book is, and the
            // address of each book for a client that takes one book an account (macOS Contacts).
            let books = try device.reader.books().map { book in
                "  \(book.name): \(DAVPath.book(DAVPath.segment(of: book.zoneID)).path) (macOS Contacts, an account of its own: \(DAVPath.principal(book: DAVPath.segment(of: book.zoneID)).path))"
            }
            return Self.text(
                .ok,
                (["a CardDAV bridge of the contacts app: address books are under \(DAVPath.homePath)"] + books)
                    .joined(separator: "\n"))
        }
        let book = try book(segment)
        let style = groupStyle(request)
        try prepare(book, for: style)
        guard let member = try device.interchange.changeLog.member(named: name, in: book.zoneID), member.present,
            try !hiddenIDs(in: book, for: style).contains(member.id)
        else {
            throw DAVError(.notFound, "no contact is at \(path.path)")
        }
        let version = Self.version(request)
        var headers = HTTPFields()
        headers[.eTag] = etag(member)
        headers[.contentType] = "text/vcard; charset=utf-8" + (version == .v4 ? "; version=4.0" : "")
        headers[.vary] = "Accept"
        if let noneMatch = request.headers[.ifNoneMatch], Self.matches(noneMatch, etag(member)) {
            return Response(status: .notModified, headers: headers)
        }
        guard let text = try await cardTexts([member], in: book, version: version, style: style)[member.id] else {
            throw DAVError(.notFound, "no contact is at \(path.path)")
        }
        let bytes = ByteBuffer(string: text)
        headers[.contentLength] = String(bytes.readableBytes)
        return Response(status: .ok, headers: headers, body: head ? ResponseBody() : ResponseBody(byteBuffer: bytes))
    }

    /// A client's card at `path`: a new contact, or a new version of the one there (an edit like any other).
    func put(_ path: DAVPath, _ request: Request) async throws -> Response {
        guard case .resource(let segment, let name) = path else {
            throw DAVError(.methodNotAllowed, "cards are PUT at \(DAVPath.homePath)<book>/<name>.vcf")
        }
        let book = try writableBook(segment)
        if let type = request.headers[.contentType]?.lowercased(),
            !(type.hasPrefix("text/vcard") || type.hasPrefix("text/x-vcard") || type.hasPrefix("text/directory"))
        {
            throw DAVError(
                .unsupportedMediaType, "a card is text/vcard, not \(type)",
                condition: (Namespace.cardDAV, "supported-address-data", nil))
        }
        let condition = try condition(request)
        let buffer = try await Self.body(of: request, limit: limits.maximumResourceBytes, what: "the card")
        let card = try Self.card(Data(buffer.readableBytesView))
        let style = groupStyle(request)
        if let group = ContactGroupCard(vCard: card) {
            // A group, from any client: never a contact named like the group. No ETag: the card is made
            // from the members (RFC 6352 §6.3.2.3).
            let (_, created) = try device.interchange.putGroupCard(
                group, named: name, in: book.zoneID, condition: condition)
            onWrite()
            return Response(status: created ? .created : .noContent)
        }
        let (member, created) = try device.interchange.putResource(
            card, named: name, in: book.zoneID, condition: condition, groupsAsCards: style == .cards)
        onWrite()
        var headers = HTTPFields()
        // RFC 6352 §6.3.2.3: a strong ETag only when a GET would give back what was sent; otherwise none,
        // so that the client reads the card as stored.
        if try storesAsSent(card, member, style) { headers[.eTag] = etag(member) }
        return Response(status: created ? .created : .noContent, headers: headers)
    }

    /// Whether the card stored for `member` is `sent`: the same properties, in any order, written the same
    /// (the photo aside, which is kept as sent, and `CATEGORIES` for a client of group cards).
    private func storesAsSent(_ sent: VCard, _ member: LoggedMember, _ style: GroupStyle) throws -> Bool {
        guard let contact = try device.interchange.changeLog.contacts([member.id]).first else { return false }
        func lines(_ card: VCard) -> [String] {
            card.properties.filter { $0.name != "PHOTO" && !(style == .cards && $0.name == "CATEGORIES") }
                .map(VCardSerializer.contentLine).sorted()
        }
        return lines(contact.vCard(version: sent.version)) == lines(sent)
    }

    func delete(_ path: DAVPath, _ request: Request) throws -> Response {
        guard case .resource(let segment, let name) = path else {
            throw DAVError(.forbidden, "address books are deleted with `contacts book delete`, not by DAV clients")
        }
        let book = try writableBook(segment)
        let condition = try condition(request)
        if try !device.interchange.deleteGroupCard(named: name, in: book.zoneID, condition: condition) {
            try device.interchange.deleteResource(named: name, in: book.zoneID, condition: condition)
        }
        onWrite()
        return Response(status: .noContent)
    }

    /// The book a write goes to; 403 saying why for one shared with this account to read only (the device
    /// would refuse the edit as well, after reading the body).
    private func writableBook(_ segment: String) throws -> AddressBook {
        let book = try book(segment)
        guard book.canEdit else {
            let owner = book.ownerUsername.map { " (by \($0))" } ?? ""
            throw DAVError(
                .forbidden,
                "the address book '\(book.name)' is shared with you to read only\(owner): ask its owner for write access",
                condition: (Namespace.dav, "need-privileges", nil))
        }
        return book
    }

    /// `If-Match` / `If-None-Match` as a condition on the resource there. An ETag this bridge never gave
    /// matches nothing (412), as a stale one does.
    private func condition(_ request: Request) throws -> ResourceCondition {
        if let match = request.headers[.ifMatch]?.trimmingCharacters(in: .whitespaces) {
            if match == "*" { return .present }
            let tags = match.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard tags.count == 1, let change = change(ofETag: tags[0]) else { return .change(-1) }
            return .change(change)
        }
        if let noneMatch = request.headers[.ifNoneMatch]?.trimmingCharacters(in: .whitespaces) {
            guard noneMatch == "*" else {
                throw DAVError(
                    .badRequest, "If-None-Match on a write is '*' (create only); send If-Match with the ETag to replace"
                )
            }
            return .absent
        }
        return .none
    }

    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { tag in
            let tag = tag.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }

    /// Exactly one vCard, readable, in UTF-8; else 400/403 saying what is wrong, nothing stored.
    static func card(_ data: Data) throws -> VCard {
        guard String(data: data, encoding: .utf8) != nil else {
            throw DAVError(
                .badRequest, "the card is not UTF-8 text", condition: (Namespace.cardDAV, "supported-address-data", nil)
            )
        }
        let result = VCardParser.parse(data)
        if let problem = result.problems.first {
            throw DAVError(
                .badRequest, "the card is not a valid vCard: \(problem.message)",
                condition: (Namespace.cardDAV, "valid-address-data", nil))
        }
        guard result.cards.count == 1, let card = result.cards.first else {
            throw DAVError(
                .badRequest,
                "a resource holds exactly one vCard (BEGIN:VCARD … END:VCARD); this body has \(result.cards.count)",
                condition: (Namespace.cardDAV, "valid-address-data", nil))
        }
        return card
    }
}
