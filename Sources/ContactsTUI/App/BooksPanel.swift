import ContactsModel
import ContactsStore
import Foundation
import SyncCore

/// The panel behind `B`: the device's books, and what can be done with them (create, rename, share,
/// unshare, accept an invitation, delete or leave), each asking for what it needs on one line.
public struct BooksPanel: Sendable, Equatable {
    /// What a typed line is for.
    public enum Question: Sendable, Equatable {
        case name, newName
        case shareWith(readOnly: Bool)
        case unshareFrom, invitation

        var label: String {
            switch self {
            case .name: "New book's name:"
            case .newName: "New name:"
            case .shareWith(let readOnly): "Share \(readOnly ? "read-only" : "read-write") with account:"
            case .unshareFrom: "Stop sharing with account:"
            case .invitation: "Paste the invitation:"
            }
        }
    }

    /// What the panel is asking for.
    public enum Step: Sendable, Equatable {
        /// Choosing a book, or an action.
        case choosing
        /// A line of text, typed into the field.
        case typing(Question, TextField)
        /// "Delete Family? [y/N]" (or leave, for a book shared with this account).
        case confirmingRemoval
    }

    /// The selected book, counted in the state's books.
    public var selection = 0
    public var step = Step.choosing
    /// The outcome of the last action, or why it was refused.
    public var notice: AppState.Message?
    /// The last invitation made, shown whole until the panel closes, for the user to copy.
    public var invitation: String?
    /// An action sent to the device and not answered yet.
    public var isBusy = false

    public init(selection: Int = 0) {
        self.selection = selection
    }

    /// The text being typed, and what it is for, when the panel asks for one.
    public var prompt: (label: String, field: TextField)? {
        guard case .typing(let question, let field) = step else { return nil }
        return (question.label, field)
    }

    /// Applies an editing key or a typed character to the prompt's text.
    mutating func edit(_ change: (inout TextField) -> Void) {
        guard case .typing(let question, var field) = step else { return }
        change(&field)
        step = .typing(question, field)
    }
}
