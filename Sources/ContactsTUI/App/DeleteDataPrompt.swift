import Foundation

/// The prompt behind `D`: the user types which data to delete, `local` or `server`, and confirms with Enter.
///
/// Typing the word, rather than pressing a key, makes a slip of the finger harmless: nothing matches by
/// accident, and the two words differ from the first letter.
public struct DeleteDataPrompt: Sendable, Equatable {
    /// What can be deleted.
    public enum Target: String, Sendable, Equatable {
        /// This device's contacts and sync state; the server keeps its copy and the next fetch restores it.
        case local
        /// The contacts zone on the server, and so every contact on every device.
        case server
    }

    /// What the user typed.
    public var input = TextField()
    /// Why the last Enter was refused.
    public var error: String?
    /// Changes not yet on the server when the prompt opened: deleting local data loses them.
    public var pendingChanges: Int

    /// A prompt, warning about `pendingChanges` unsent changes.
    public init(pendingChanges: Int) {
        self.pendingChanges = pendingChanges
    }

    /// The target typed, or nil after setting ``error``.
    public mutating func submit() -> Target? {
        let word = input.text.trimmingCharacters(in: .whitespaces).lowercased()
        guard let target = Target(rawValue: word) else {
            error = "type local or server, then Enter; Esc cancels"
            return nil
        }
        return target
    }
}
