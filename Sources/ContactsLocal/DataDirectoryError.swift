import ContactsModel
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why the data directory was refused: the facts, for the program to say what to do.
public enum DataDirectoryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Group or others may write to `path` (its permission bits are `mode`).
    case writableByOthers(path: String, mode: mode_t, isDirectory: Bool)
    /// `path` belongs to the user `owner`, not to `user`, who runs the app.
    case ownedByAnotherUser(path: String, owner: uid_t, user: uid_t)
    /// `path`, inside the data directory, is a symbolic link.
    case symbolicLink(path: String)
    /// `path` should be a directory and is not, or the other way round.
    case notADirectory(path: String)
    /// `path` could not be created (`reason` is an errno value).
    case cannotCreate(path: String, reason: Int32)
    /// `path` could not be looked at (`reason` is an errno value).
    case unreadable(path: String, reason: Int32)

    /// The path at fault.
    public var path: String {
        switch self {
        case .writableByOthers(let path, _, _), .ownedByAnotherUser(let path, _, _), .symbolicLink(let path),
            .notADirectory(let path), .cannotCreate(let path, _), .unreadable(let path, _):
            path
        }
    }

    public var description: String {
        let path = self.path.terminalSafe
        switch self {
        case .writableByOthers(_, let mode, let isDirectory):
            return
                "\(path) can be written by other users (mode \(String(mode, radix: 8))), so they could change your "
                + "contacts or what this program runs; make it yours alone with: chmod \(isDirectory ? "700" : "600") \(path)"
        case .ownedByAnotherUser(_, let owner, let user):
            return
                "\(path) belongs to another user (uid \(owner)), not to you (uid \(user)); use a data directory of your "
                + "own, or give it to yourself with: chown -R \(user) \(path)"
        case .symbolicLink:
            return "\(path) is a symbolic link; the data directory holds no links: remove it"
        case .notADirectory:
            return "\(path) is in the way: remove it or use another data directory"
        case .cannotCreate(_, let reason):
            return "cannot create \(path): \(String(cString: strerror(reason)))"
        case .unreadable(_, let reason):
            return "cannot read \(path): \(String(cString: strerror(reason)))"
        }
    }
}
