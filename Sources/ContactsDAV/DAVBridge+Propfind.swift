import ContactsModel
import ContactsStore
import Foundation
import HTTPTypes
import Hummingbird
import VCard

/// What a PROPFIND asks for.
enum PropertyRequest {
    case all
    case names
    case some([PropName])

    /// Reads a `DAV:propfind` body (none: allprop).
    init(propfind body: XMLNode?) throws(DAVError) {
        guard let body else {
            self = .all
            return
        }
        guard body.is(Namespace.dav, "propfind") else {
            throw DAVError(.badRequest, "a PROPFIND's body is a DAV:propfind element, not \(body.name)")
        }
        if body.child(Namespace.dav, "propname") != nil {
            self = .names
        } else if let prop = body.child(Namespace.dav, "prop") {
            self = .some(prop.children.map(PropName.init))
        } else {
            self = .all
        }
    }

    func properties(of target: Target) -> [PropName] {
        switch self {
        case .all, .names: target.allProperties
        case .some(let names): names
        }
    }

    var wantsAddressData: Bool {
        if case .some(let names) = self { return names.contains(.addressData) }
        return false
    }
}

extension DAVBridge {
    enum Depth { case zero, one }

    /// The `Depth` header: 0 or 1 (missing: 0); `infinity` is refused, as RFC 4918 allows.
    static func depth(_ request: Request) throws -> Depth {
        switch request.headers[HTTPField.Name("Depth")!]?.trimmingCharacters(in: .whitespaces).lowercased() {
        case nil, "0": return .zero
        case "1": return .one
        case "infinity":
            throw DAVError(
                .forbidden, "PROPFIND with Depth: infinity is not served; ask with Depth: 1",
                condition: (Namespace.dav, "propfind-finite-depth", nil))
        case let other?: throw DAVError(.badRequest, "Depth is 0, 1 or infinity, not '\(other)'")
        }
    }

    func propfind(_ path: DAVPath, _ request: Request) async throws -> Response {
        let depth = try Self.depth(request)
        let style = groupStyle(request)
        let asked = try PropertyRequest(propfind: try await xmlBody(request))
        var targets: [Target] = []
        switch path {
        case .root:
            targets = [.root]
        case .principal(let segment):
            targets = [.principal(try segment.map { try book($0) })]
        case .home(let segment?):
            // One book's home (for macOS Contacts, which takes the first book of a home): that book alone.
            let book = try book(segment)
            targets = [.home(book)]
            if depth == .one {
                try prepare(book, for: style)
                targets.append(.book(book, latest: try device.interchange.changeLog.latestChange(in: book.zoneID)))
            }
        case .home(nil):
            targets = [.home(nil)]
            if depth == .one {
                for book in try device.reader.books() {
                    try prepare(book, for: style)
                    targets.append(.book(book, latest: try device.interchange.changeLog.latestChange(in: book.zoneID)))
                }
            }
        case .book(let segment):
            let book = try book(segment)
            try prepare(book, for: style)
            let bookTarget = Target.book(book, latest: try device.interchange.changeLog.latestChange(in: book.zoneID))
            if depth == .one {
                return listing(of: book, bookTarget, asked, version: Self.version(request), style: style)
            }
            targets = [bookTarget]
        case .resource(let segment, let name):
            let book = try book(segment)
            try prepare(book, for: style)
            guard let member = try device.interchange.changeLog.member(named: name, in: book.zoneID), member.present,
                try !hiddenIDs(in: book, for: style).contains(member.id)
            else {
                throw DAVError(.notFound, "no contact is at \(path.path)")
            }
            let cards =
                asked.wantsAddressData
                ? try await cardTexts([member], in: book, version: Self.version(request), style: style) : [:]
            targets = [.member(book, member, card: cards[member.id])]
        }
        var writer = XMLWriter()
        writer.root(Namespace.dav, "multistatus")
        for target in targets { write(target, asked, into: &writer) }
        writer.end()
        return Self.xml(.multiStatus, writer)
    }

    /// A book and its members (`Depth: 1`), written a page at a time as the members are read: a book of
    /// a million answers in flat memory. The status is sent before the members are read, so a failure
    /// part way (a photo that cannot be downloaded for `address-data`) cuts the answer short, which the
    /// client reads as a failed request.
    private func listing(
        of book: AddressBook, _ bookTarget: Target, _ asked: PropertyRequest, version: VCard.Version,
        style: GroupStyle
    ) -> Response {
        let body = ResponseBody { [self] writer in
            var xml = XMLWriter()
            xml.root(Namespace.dav, "multistatus")
            write(bookTarget, asked, into: &xml)
            func page(_ members: [LoggedMember]) async throws {
                let cards =
                    asked.wantsAddressData
                    ? try await cardTexts(members, in: book, version: version, style: style) : [:]
                for member in members { write(.member(book, member, card: cards[member.id]), asked, into: &xml) }
                try await writer.write(ByteBuffer(string: xml.take()))
            }
            try await device.interchange.changeLog.forEachPageOfMembers(
                of: book.zoneID, pageSize: limits.listingPageSize, page)
            if style == .cards { try await page(try device.interchange.changeLog.groupCardMembers(of: book.zoneID)) }
            xml.end()
            try await writer.write(ByteBuffer(string: xml.take()))
            try await writer.finish(nil)
        }
        return Response(status: .multiStatus, headers: [.contentType: Self.xmlContentType], body: body)
    }

    /// One target's response: its properties' names for `propname`, else the properties asked for.
    private func write(_ target: Target, _ asked: PropertyRequest, into writer: inout XMLWriter) {
        guard case .names = asked else {
            return writeResponse(target, properties: asked.properties(of: target), into: &writer)
        }
        writer.start(Namespace.dav, "response")
        writer.href(target.path)
        writer.start(Namespace.dav, "propstat")
        writer.start(Namespace.dav, "prop")
        for name in target.allProperties { writer.element(name.namespace, name.name) }
        writer.end()
        writer.status(200, "OK")
        writer.end()
        writer.end()
    }

    /// PROPPATCH: the bridge's properties are the device's (a book is renamed with `contacts book rename`);
    /// each property asked to change answers 403, as RFC 4918 has it.
    func proppatch(_ path: DAVPath, _ request: Request) async throws -> Response {
        guard let body = try await xmlBody(request), body.is(Namespace.dav, "propertyupdate") else {
            throw DAVError(.badRequest, "a PROPPATCH's body is a DAV:propertyupdate element")
        }
        var names: [PropName] = []
        for change in body.children {
            for prop in change.all(Namespace.dav, "prop") { names += prop.children.map(PropName.init) }
        }
        var writer = XMLWriter()
        writer.root(Namespace.dav, "multistatus")
        writer.start(Namespace.dav, "response")
        writer.href(path.path)
        writer.start(Namespace.dav, "propstat")
        writer.start(Namespace.dav, "prop")
        for name in names { writer.element(name.namespace, name.name) }
        writer.end()
        writer.status(403, "Forbidden")
        writer.element(
            Namespace.dav, "responsedescription",
            "properties are set on the device: `contacts book rename` renames a book")
        writer.end()
        writer.end()
        writer.end()
        return Self.xml(.multiStatus, writer)
    }

    /// The vCard version a request asks for: `Accept: text/vcard; version=4.0` gives 4.0; anything else 3.0,
    /// which every CardDAV client reads.
    static func version(_ request: Request) -> VCard.Version {
        version(accepting: request.headers[.accept])
    }

    static func version(accepting accept: String?) -> VCard.Version {
        guard let accept = accept?.lowercased().replacingOccurrences(of: " ", with: "") else { return .v3 }
        return accept.contains("version=4.0") || accept.contains("version=\"4.0\"") ? .v4 : .v3
    }

    /// The members' vCards as text, photos inline (downloaded first when this device lacks one).
    /// Group cards among them are made from their members, for a client of group cards (to which a contact's
    /// card has no `CATEGORIES`).
    func cardTexts(_ members: [LoggedMember], in book: AddressBook, version: VCard.Version, style: GroupStyle)
        async throws -> [UUID: String]
    {
        let groupCards =
            style == .cards ? try device.interchange.changeLog.groupCards(members.map(\.id), in: book.zoneID) : [:]
        // Each looked up by its ID, in one read: a page of a first download in a book of a million.
        let contacts = try device.interchange.changeLog.contacts(members.map(\.id).filter { groupCards[$0] == nil })
        let cards: [VCard]
        do {
            cards = try await device.interchange.vCardsWithPhotos(contacts, version: version)
        } catch {
            // Served without the photo, a client that writes the card back would remove it.
            throw DAVError(
                .serviceUnavailable,
                "a contact's photo is not on this device and could not be downloaded (\(error)); try again when the server answers"
            )
        }
        var texts: [UUID: String] = [:]
        for (contact, card) in zip(contacts, cards) {
            var card = card
            if style == .cards { card.properties.removeAll { $0.name == "CATEGORIES" } }
            texts[contact.id] = VCardSerializer.serialize(card)
        }
        for (id, stored) in groupCards { texts[id] = VCardSerializer.serialize(stored.card.vCard(version: version)) }
        return texts
    }
}
