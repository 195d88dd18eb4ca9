import ContactsModel
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why a private file could not be written or read; nothing was written through a link.
public enum PrivateFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A symbolic link is at `path`: it was neither followed nor replaced.
    case symbolicLink(path: String)
    /// Writing `path` failed with the system's `reason` (an errno value).
    case cannotWrite(path: String, reason: Int32)
    /// Reading `path` failed with the system's `reason` (an errno value).
    case cannotRead(path: String, reason: Int32)

    public var description: String {
        switch self {
        case .symbolicLink(let path):
            "\(path.terminalSafe) is a symbolic link, which is not followed here (someone else may have put it "
                + "there); give the path of a file, or remove the link"
        case .cannotWrite(let path, let reason):
            "cannot write \(path.terminalSafe): \(String(cString: strerror(reason))); "
                + "check the directory exists and is writable"
        case .cannotRead(let path, let reason):
            "cannot read \(path.terminalSafe): \(String(cString: strerror(reason)))"
        }
    }

    /// This error, about `path` instead of a temporary file beside it.
    func about(_ path: String) -> PrivateFileError {
        switch self {
        case .symbolicLink: .symbolicLink(path: path)
        case .cannotWrite(_, let reason): .cannotWrite(path: path, reason: reason)
        case .cannotRead(_, let reason): .cannotRead(path: path, reason: reason)
        }
    }
}
