import ContactsStore
import Foundation
import SyncCore

/// A property's name: its namespace and local name.
struct PropName: Hashable, Sendable {
    var namespace: String
    var name: String

    init(_ namespace: String, _ name: String) {
        self.namespace = namespace
        self.name = name
    }

    init(_ node: XMLNode) { self.init(node.namespace, node.name) }

    static let resourceType = PropName(Namespace.dav, "resourcetype")
    static let displayName = PropName(Namespace.dav, "displayname")
    static let currentUserPrincipal = PropName(Namespace.dav, "current-user-principal")
    static let principalURL = PropName(Namespace.dav, "principal-URL")
    static let owner = PropName(Namespace.dav, "owner")
    static let privileges = PropName(Namespace.dav, "current-user-privilege-set")
    static let supportedReports = PropName(Namespace.dav, "supported-report-set")
    static let syncToken = PropName(Namespace.dav, "sync-token")
    static let etag = PropName(Namespace.dav, "getetag")
    static let contentType = PropName(Namespace.dav, "getcontenttype")
    static let homeSet = PropName(Namespace.cardDAV, "addressbook-home-set")
    static let description = PropName(Namespace.cardDAV, "addressbook-description")
    static let addressData = PropName(Namespace.cardDAV, "address-data")
    static let supportedAddressData = PropName(Namespace.cardDAV, "supported-address-data")
    static let maximumResourceSize = PropName(Namespace.cardDAV, "max-resource-size")
    static let ctag = PropName(Namespace.calendarServer, "getctag")
}

/// What a response describes.
enum Target {
    case root
    /// The user, or the principal of one book (``DAVPath/principal(book:)``).
    case principal(AddressBook?)
    /// The home of every book, or of one.
    case home(AddressBook?)
    case book(AddressBook, latest: Int64)
    /// A contact; `card` is its vCard text when the request asked for `address-data`.
    case member(AddressBook, LoggedMember, card: String?)

    var path: String {
        switch self {
        case .root: DAVPath.root.path
        case .principal(let book): DAVPath.principal(book: book.map(Self.segment)).path
        case .home(let book): DAVPath.home(book: book.map(Self.segment)).path
        case .book(let book, _): DAVPath.book(DAVPath.segment(of: book.zoneID)).path
        case .member(let book, let member, _):
            DAVPath.resource(book: DAVPath.segment(of: book.zoneID), name: DAVPath.name(of: member)).path
        }
    }

    private static func segment(_ book: AddressBook) -> String { DAVPath.segment(of: book.zoneID) }

    /// The principal of the scope this target is in: the user's, or its book's for a target of one book.
    var principalPath: String {
        switch self {
        case .principal(let book?), .home(let book?): DAVPath.principal(book: Self.segment(book)).path
        default: DAVPath.principalPath
        }
    }

    /// The home set of the scope this target is in.
    var homeSetPath: String {
        switch self {
        case .principal(let book?), .home(let book?): DAVPath.home(book: Self.segment(book)).path
        default: DAVPath.homePath
        }
    }

    /// The properties `allprop` lists (`address-data` aside, as RFC 6352 asks).
    var allProperties: [PropName] {
        switch self {
        case .root, .home:
            [.resourceType, .displayName, .currentUserPrincipal, .homeSet]
        case .principal:
            [.resourceType, .displayName, .currentUserPrincipal, .principalURL, .homeSet]
        case .book:
            [
                .resourceType, .displayName, .currentUserPrincipal, .owner, .privileges, .supportedReports, .syncToken,
                .ctag, .supportedAddressData, .maximumResourceSize,
            ]
        case .member:
            [.resourceType, .etag, .contentType]
        }
    }
}

extension DAVBridge {
    /// Writes `target`'s response: the properties it has with 200, the others with 404.
    func writeResponse(_ target: Target, properties: [PropName], into writer: inout XMLWriter) {
        writer.start(Namespace.dav, "response")
        writer.href(target.path)
        var missing: [PropName] = []
        var found = false
        for property in properties {
            var value = XMLWriter.fragment()
            if write(property, of: target, into: &value) {
                if !found {
                    writer.start(Namespace.dav, "propstat")
                    writer.start(Namespace.dav, "prop")
                    found = true
                }
                writer.append(value)
            } else {
                missing.append(property)
            }
        }
        if found {
            writer.end()
            writer.status(200, "OK")
            writer.end()
        }
        if !missing.isEmpty {
            writer.start(Namespace.dav, "propstat")
            writer.start(Namespace.dav, "prop")
            for property in missing { writer.element(property.namespace, property.name) }
            writer.end()
            writer.status(404, "Not Found")
            writer.end()
        }
        writer.end()
    }

    /// A removed member, for sync-collection: its href with 404.
    func writeRemoved(_ book: AddressBook, _ member: LoggedMember, into writer: inout XMLWriter) {
        writer.start(Namespace.dav, "response")
        writer.href(Target.member(book, member, card: nil).path)
        writer.status(404, "Not Found")
        writer.end()
    }

    /// Writes one property of `target`; false when it has no such property.
    private func write(_ property: PropName, of target: Target, into writer: inout XMLWriter) -> Bool {
        func hrefElement(_ namespace: String, _ name: String, _ path: String) {
            writer.start(namespace, name)
            writer.href(path)
            writer.end()
        }
        switch (property, target) {
        case (.resourceType, _):
            writer.start(Namespace.dav, "resourcetype")
            switch target {
            case .root, .home: writer.element(Namespace.dav, "collection")
            case .principal:
                writer.element(Namespace.dav, "collection")
                writer.element(Namespace.dav, "principal")
            case .book:
                writer.element(Namespace.dav, "collection")
                writer.element(Namespace.cardDAV, "addressbook")
            case .member: break
            }
            writer.end()
        case (.displayName, .book(let book, _)): writer.element(Namespace.dav, "displayname", book.name)
        case (.displayName, .principal(let book)):
            writer.element(Namespace.dav, "displayname", book.map { "\(device.name): \($0.name)" } ?? device.name)
        case (.displayName, .home(let book)):
            writer.element(Namespace.dav, "displayname", book?.name ?? "Address books")
        case (.displayName, .root): writer.element(Namespace.dav, "displayname", "contacts")
        case (.currentUserPrincipal, .root), (.currentUserPrincipal, .principal), (.currentUserPrincipal, .home),
            (.currentUserPrincipal, .book):
            hrefElement(Namespace.dav, "current-user-principal", target.principalPath)
        case (.principalURL, .principal): hrefElement(Namespace.dav, "principal-URL", target.principalPath)
        case (.owner, .book): hrefElement(Namespace.dav, "owner", DAVPath.principalPath)
        case (.homeSet, .root), (.homeSet, .principal), (.homeSet, .home):
            hrefElement(Namespace.cardDAV, "addressbook-home-set", target.homeSetPath)
        case (.privileges, .book(let book, _)):
            writer.start(Namespace.dav, "current-user-privilege-set")
            let privileges =
                book.canEdit
                ? ["read", "read-current-user-privilege-set", "write", "write-content", "bind", "unbind"]
                : ["read", "read-current-user-privilege-set"]
            for privilege in privileges {
                writer.start(Namespace.dav, "privilege")
                writer.element(Namespace.dav, privilege)
                writer.end()
            }
            writer.end()
        case (.supportedReports, .book):
            writer.start(Namespace.dav, "supported-report-set")
            for (namespace, name) in [
                (Namespace.cardDAV, "addressbook-query"), (Namespace.cardDAV, "addressbook-multiget"),
                (Namespace.dav, "sync-collection"),
            ] {
                writer.start(Namespace.dav, "supported-report")
                writer.start(Namespace.dav, "report")
                writer.element(namespace, name)
                writer.end()
                writer.end()
            }
            writer.end()
        case (.syncToken, .book(let book, let latest)):
            writer.element(Namespace.dav, "sync-token", syncToken(latest, of: book))
        case (.ctag, .book(_, let latest)): writer.element(Namespace.calendarServer, "getctag", "\(epoch)-\(latest)")
        case (.supportedAddressData, .book):
            writer.start(Namespace.cardDAV, "supported-address-data")
            for version in ["3.0", "4.0"] {
                writer.element(
                    Namespace.cardDAV, "address-data-type",
                    attributes: [("content-type", "text/vcard"), ("version", version)])
            }
            writer.end()
        case (.maximumResourceSize, .book):
            writer.element(Namespace.cardDAV, "max-resource-size", String(limits.maximumResourceBytes))
        case (.description, .book(let book, _)):
            let owner = book.ownerUsername.map { ", shared by \($0)" } ?? ""
            writer.element(
                Namespace.cardDAV, "addressbook-description", book.name + owner + (book.canEdit ? "" : ", read only"))
        case (.etag, .member(_, let member, _)): writer.element(Namespace.dav, "getetag", etag(member))
        case (.contentType, .member): writer.element(Namespace.dav, "getcontenttype", "text/vcard; charset=utf-8")
        case (.addressData, .member(_, _, let card?)): writer.element(Namespace.cardDAV, "address-data", card)
        default: return false
        }
        return true
    }
}
