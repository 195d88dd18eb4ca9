import ContactsModel
import ContactsStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SyncCore
import VCard

/// Serves one device's address books over CardDAV (RFC 6352), with sync-collection (RFC 6578) and
/// `/.well-known/carddav` (RFC 6764), from the contacts on the device: the server holds only ciphertext,
/// so the bridge runs where they are decrypted (as etesync-dav does for EteSync).
///
/// Reads come from the device's store and its change log; writes are edits of the device, checked against
/// `If-Match`/`If-None-Match` in the edit's own transaction, then sent to the server like any edit.
public struct DAVBridge: Sendable {
    public struct Limits: Sendable, Hashable {
        /// The largest vCard a client may `PUT` (photos come inline, base64).
        public var maximumResourceBytes = 16 << 20
        /// The largest XML body of a `PROPFIND` or `REPORT`.
        public var maximumXMLBytes = 1 << 20
        /// The most members one `sync-collection` answer lists before it is truncated with a new token.
        public var syncPageSize = 2_000
        /// The most members one `addressbook-query` answer lists; more are cut short with a 507 on the
        /// book (RFC 6352 §8.6.1), so that a query of a large book answers a page, not the book.
        public var queryResultLimit = 10_000
        /// How many members a `Depth: 1` listing of a book reads and sends at a time.
        public var listingPageSize = 1_000

        public init() {}
    }

    let device: ContactsDevice
    let credentials: BridgeCredentials
    let limits: Limits
    let epoch: String
    /// Sends a client's write at once; nil when the device sends only when told (tests that sync by hand).
    let sender: ImmediateSend?
    let groupCards: GroupCards
    let logger: Logger

    /// - Parameters:
    ///   - sendsWritesAtOnce: whether a client's write is sent to the server as soon as it is saved (a DAV
    ///     client's write is a whole edit, not a keystroke to wait out) rather than when the device's
    ///     scheduler next sends.
    ///   - groupCards: which clients are served groups as cards of their own.
    public init(
        device: ContactsDevice, credentials: BridgeCredentials, limits: Limits = Limits(), logger: Logger,
        sendsWritesAtOnce: Bool = true, groupCards: GroupCards = .auto
    ) throws {
        self.device = device
        self.credentials = credentials
        self.limits = limits
        self.logger = logger
        self.groupCards = groupCards
        sender = sendsWritesAtOnce ? ImmediateSend(device: device) : nil
        epoch = try device.interchange.startChangeLog()
        try device.interchange.startGroupCards()
    }

    /// Waits for the send of the clients' last writes, if one is under way.
    public func finishSending() async { await sender?.finish() }

    func onWrite() { sender?.request() }

    static let allowedMethods = "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, REPORT"

    /// Answers one request; a refusal is an answer too (with its status and a sentence saying why).
    public func respond(to request: Request) async -> Response {
        do {
            return try await answer(request)
        } catch let error as DAVError {
            return Self.refusal(error)
        } catch let error as ResourceError {
            return Self.refusal(Self.dav(error))
        } catch let error as ContactError {
            if case .readOnlyBook = error {
                return Self.refusal(
                    DAVError(.forbidden, error.description, condition: (Namespace.dav, "need-privileges", nil)))
            }
            return Self.refusal(
                DAVError(
                    .forbidden, "the card was not saved: \(error.description)",
                    condition: (Namespace.cardDAV, "valid-address-data", nil)))
        } catch let error as DeviceError {
            return Self.refusal(DAVError(.forbidden, "\(error)"))
        } catch {
            logger.error(
                "request failed",
                metadata: ["method": "\(request.method)", "path": "\(request.uri.path)", "error": "\(error)"])
            return Self.refusal(DAVError(.internalServerError, "the bridge could not answer: \(error)"))
        }
    }

    private func answer(_ request: Request) async throws -> Response {
        let rawPath = request.uri.path
        if rawPath == "/.well-known/carddav" || rawPath == "/.well-known/carddav/" {
            // RFC 6764: the context path. Before authentication, so clients find it with their first request.
            return Response(status: .movedPermanently, headers: [.location: DAVPath.root.path])
        }
        guard credentials.accepts(authorization: request.headers[.authorization]) else {
            var headers = HTTPFields()
            headers[.wwwAuthenticate] = "Basic realm=\"contacts\", charset=\"UTF-8\""
            return Self.text(
                .unauthorized,
                "this bridge needs its user name and password (HTTP Basic): `contacts dav --show-credentials` shows them",
                headers: headers)
        }
        guard let path = try DAVPath(requestPath: rawPath) else {
            throw DAVError(.notFound, "nothing is at \(rawPath): address books are under \(DAVPath.homePath)")
        }
        switch request.method.rawValue {
        case "OPTIONS": return options()
        case "PROPFIND": return try await propfind(path, request)
        case "REPORT": return try await report(path, request)
        case "GET", "HEAD": return try await get(path, request, head: request.method == .head)
        case "PUT": return try await put(path, request)
        case "DELETE": return try delete(path, request)
        case "PROPPATCH": return try await proppatch(path, request)
        case "MKCOL", "MKCALENDAR":
            throw DAVError(.forbidden, "address books are made with `contacts book create NAME`, not by DAV clients")
        default:
            var headers = HTTPFields()
            headers[.allow] = Self.allowedMethods
            return Self.text(
                .methodNotAllowed, "\(request.method.rawValue) is not something a CardDAV address book does",
                headers: headers)
        }
    }

    private func options() -> Response {
        var headers = HTTPFields()
        headers[.allow] = Self.allowedMethods
        headers[HTTPField.Name("DAV")!] = "1, 3, addressbook"
        return Response(status: .ok, headers: headers)
    }

    // MARK: Books

    /// The path segment naming `book` in the bridge's URLs (`/books/<segment>/`, `/principals/<segment>/`),
    /// percent-encoded.
    public static func segment(of book: AddressBook) -> String { DAVPath.encoded(DAVPath.segment(of: book.zoneID)) }

    /// The book a path segment names.
    func book(_ segment: String) throws -> AddressBook {
        guard let book = try device.reader.books().first(where: { DAVPath.segment(of: $0.zoneID) == segment }) else {
            throw DAVError(
                .notFound,
                "no address book is at \(DAVPath.book(segment).path): PROPFIND \(DAVPath.homePath) lists them")
        }
        return book
    }

    // MARK: Tags

    func etag(_ member: LoggedMember) -> String { "\"\(epoch)-\(member.change)\"" }

    /// The sync token of `book` at `change`. The device's change log is one sequence for all its books, so
    /// the token names its book: a token of one book used on another would stand for a point in the other's
    /// history that its client never saw, and leave out every card it had not been sent.
    func syncToken(_ change: Int64, of book: AddressBook) -> String {
        syncTokenPrefix(of: book) + String(change)
    }

    /// The change a sync token of `book` stands for; nil for one of another book, another device or a
    /// rebuilt log (the client then syncs again without a token).
    func change(ofSyncToken token: String, of book: AddressBook) -> Int64? {
        let prefix = syncTokenPrefix(of: book)
        guard token.hasPrefix(prefix), let change = Int64(token.dropFirst(prefix.count)), change >= 0 else {
            return nil
        }
        return change
    }

    private func syncTokenPrefix(of book: AddressBook) -> String {
        "https://contacts.invalid/sync/\(epoch)/\(DAVPath.segment(of: book.zoneID))/"
    }

    /// The change an `If-Match` ETag names; nil for an ETag this bridge never gave (which matches nothing).
    func change(ofETag text: String) -> Int64? {
        let prefix = "\"\(epoch)-"
        guard text.hasPrefix(prefix), text.hasSuffix("\""), let change = Int64(text.dropFirst(prefix.count).dropLast())
        else {
            return nil
        }
        return change
    }

    // MARK: Bodies

    /// The request's body, refused with 413 beyond `limit`.
    static func body(of request: Request, limit: Int, what: String) async throws -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw DAVError(.contentTooLarge, "\(what) is \(length) bytes; this bridge takes at most \(limit)")
        }
        var request = request
        do {
            return try await request.collectBody(upTo: limit)
        } catch let error where error is NIOTooManyBytesError || (error as? HTTPError)?.status == .contentTooLarge {
            // A body of no stated length (chunked) that went past the limit as it came.
            throw DAVError(.contentTooLarge, "\(what) is larger than this bridge takes (\(limit) bytes)")
        }
    }

    /// The request's XML body; nil when it has none.
    func xmlBody(_ request: Request) async throws -> XMLNode? {
        let buffer = try await Self.body(of: request, limit: limits.maximumXMLBytes, what: "the request's XML")
        guard buffer.readableBytes > 0 else { return nil }
        return try XMLNode.parse(Data(buffer.readableBytesView))
    }

    // MARK: Answers

    static func text(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(
            status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }

    static let xmlContentType = "application/xml; charset=utf-8"

    static func xml(_ status: HTTPResponse.Status, _ writer: XMLWriter, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = xmlContentType
        return Response(
            status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: writer.text)))
    }

    /// A refusal: with its precondition as RFC 4918's `DAV:error` body (the sentence in it too), else as text.
    static func refusal(_ error: DAVError) -> Response {
        guard let condition = error.condition else { return text(error.status, error.message) }
        var writer = XMLWriter()
        writer.root(Namespace.dav, "error")
        if let href = condition.href {
            writer.start(condition.namespace, condition.name)
            writer.href(href)
            writer.end()
        } else {
            writer.element(condition.namespace, condition.name)
        }
        writer.element(Namespace.dav, "responsedescription", error.message)
        writer.end()
        return xml(error.status, writer)
    }

    static func dav(_ error: ResourceError) -> DAVError {
        switch error {
        case .conditionFailed:
            return DAVError(
                .preconditionFailed,
                "the contact changed since the client read it (its ETag differs): read it again, then write")
        case .notFound:
            return DAVError(.notFound, "no contact is at this address")
        case .kindConflict(let group):
            return DAVError(
                .conflict,
                group
                    ? "a contact is at this address: write the group card at an address of its own"
                    : "a group card is at this address: write the contact at an address of its own",
                condition: (Namespace.cardDAV, "no-uid-conflict", nil))
        case .unnamedGroup:
            return DAVError(
                .forbidden, "the group card has no name (FN): give the group a name",
                condition: (Namespace.cardDAV, "valid-address-data", nil))
        case .uidConflict(let id, let book, let name):
            let path = DAVPath.resource(book: DAVPath.segment(of: book), name: name ?? id.canonicalString + ".vcf").path
            return DAVError(
                .conflict, "the card's UID is that of the contact at \(path): write it there",
                condition: (Namespace.cardDAV, "no-uid-conflict", path))
        }
    }
}
