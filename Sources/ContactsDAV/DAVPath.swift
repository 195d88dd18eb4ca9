import ContactsModel
import ContactsStore
import Foundation
import HTTPTypes
import SyncCore

/// What a request's path names. The bridge's tree:
///
///     /                          the root (also where /.well-known/carddav leads)
///     /principal/                the one user
///     /books/                    the address book home: one collection per book
///     /books/<book>/             a book (its zone name; for a book shared with the user, zone~owner)
///     /books/<book>/<name>       a contact (`<ID>.vcf`, or the name a client PUT it at)
///     /principals/<book>/        a principal of one book, for clients that take only the first book of a
///                                home (macOS Contacts): its home set is
///     /homes/<book>/             a home holding that book alone
enum DAVPath: Hashable, Sendable {
    case root
    /// The user, or (with a book) the principal of that book alone.
    case principal(book: String?)
    /// The home of every book, or (with a book) of that book alone.
    case home(book: String?)
    case book(String)
    case resource(book: String, name: String)

    static let principalPath = "/principal/"
    static let homePath = "/books/"
    static let principal = DAVPath.principal(book: nil)
    static let home = DAVPath.home(book: nil)

    /// Reads a request's path (percent-encoded, as it came). Nil for a path the tree does not have; throws
    /// 400 for one no client would send (a segment `..`, an encoded slash, control characters).
    init?(requestPath raw: String) throws(DAVError) {
        let pathOnly = raw.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard pathOnly.hasPrefix("/") else { throw DAVError(.badRequest, "the request's path must begin with '/'") }
        var segments: [String] = []
        for raw in pathOnly.split(separator: "/", omittingEmptySubsequences: true) {
            guard let segment = String(raw).removingPercentEncoding else {
                throw DAVError(.badRequest, "the request's path has a malformed percent-encoding")
            }
            try Self.check(segment)
            segments.append(segment)
        }
        switch segments.count {
        case 0: self = .root
        case 1 where segments[0] == "principal": self = .principal
        case 1 where segments[0] == "books": self = .home
        case 2 where segments[0] == "principals": self = .principal(book: segments[1])
        case 2 where segments[0] == "homes": self = .home(book: segments[1])
        case 2 where segments[0] == "books": self = .book(segments[1])
        case 3 where segments[0] == "books" && !pathOnly.hasSuffix("/"):
            self = .resource(book: segments[1], name: segments[2])
        default: return nil
        }
    }

    /// A segment a client may send: not `.` or `..`, no slash (encoded), no control character, at most 255
    /// bytes. The names are keys in the device's database, never paths in a file system; they are refused
    /// anyway, since no well-behaved client sends them.
    static func check(_ segment: String) throws(DAVError) {
        guard segment != ".", segment != "..", !segment.contains("/"), segment.utf8.count <= 255,
            !segment.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw DAVError(
                .badRequest,
                "the request's path has a segment no address book has ('.', '..', a slash, a control character or over 255 bytes)"
            )
        }
    }

    /// The path of this place, percent-encoded.
    var path: String {
        switch self {
        case .root: return "/"
        case .principal(nil): return Self.principalPath
        case .principal(let book?): return "/principals/" + Self.encoded(book) + "/"
        case .home(nil): return Self.homePath
        case .home(let book?): return "/homes/" + Self.encoded(book) + "/"
        case .book(let book): return Self.homePath + Self.encoded(book) + "/"
        case .resource(let book, let name): return Self.homePath + Self.encoded(book) + "/" + Self.encoded(name)
        }
    }

    static func encoded(_ segment: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(
            CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-._~@+")
        return segment.addingPercentEncoding(withAllowedCharacters: allowed) ?? segment
    }

    /// The segment naming `book`: its zone name, with its owner's name after `~` for a book shared with the user.
    static func segment(of book: RecordZone.ID) -> String {
        book.ownerName == RecordZone.ID.defaultOwnerName ? book.zoneName : book.zoneName + "~" + book.ownerName
    }

    /// The resource name of a member: the one a client gave it, else its ID.
    static func name(of member: LoggedMember) -> String { member.resourceName ?? member.id.canonicalString + ".vcf" }
}
