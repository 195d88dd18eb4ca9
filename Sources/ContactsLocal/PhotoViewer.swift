import ContactsModel
import Foundation

/// The person's image viewer: `$CONTACTS_PHOTO_VIEWER` (a terminal viewer such as `chafa` or `timg`, or a
/// window's), else `xdg-open`, run through the shell on a photo's file with this process's terminal.
public struct PhotoViewer: Sendable {
    /// Why the viewer did not show the photo.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    public var command: String

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let named = environment["CONTACTS_PHOTO_VIEWER"] ?? ""
        command = named.allSatisfy(\.isWhitespace) ? "xdg-open" : named
    }

    /// Shows the image at `path` and waits for the viewer to exit.
    public func open(_ path: String) throws(Failure) {
        switch TerminalCommand(command: command).run(on: path) {
        case .finished:
            return
        case .cannotStart(let reason):
            throw Failure(
                description: "the photo viewer '\(command.terminalSafeForMessages)' could not be started (\(reason)); "
                    + "set CONTACTS_PHOTO_VIEWER to one that works here, such as CONTACTS_PHOTO_VIEWER=chafa")
        case .failed(let status):
            throw Failure(
                description: "the photo viewer '\(command.terminalSafeForMessages)' exited with status \(status); "
                    + "set CONTACTS_PHOTO_VIEWER to a viewer that works here (xdg-open needs a desktop)")
        }
    }
}
