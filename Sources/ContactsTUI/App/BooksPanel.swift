import ContactsCore
import Foundation
import SyncCore

/// The panel behind `B`: the device's books, and what can be done with them (create, rename, share,
/// unshare, accept an invitation, delete or leave), each asking for what it needs on one line.
public struct BooksPanel: Sendable, Equatable {
    /// What the panel is asking for.
    public enum Step: Sendable, Equatable {
        /// Choosing a book, or an action.
        case choosing
        case naming(TextField)
        case renaming(TextField)
        case sharing(TextField, readOnly: Bool)
        case unsharing(TextField)
        case accepting(TextField)
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
        switch step {
        case .choosing, .confirmingRemoval: nil
        case .naming(let field): ("New book's name:", field)
        case .renaming(let field): ("New name:", field)
        case .sharing(let field, let readOnly): ("Share \(readOnly ? "read-only" : "read-write") with account:", field)
        case .unsharing(let field): ("Stop sharing with account:", field)
        case .accepting(let field): ("Paste the invitation:", field)
        }
    }

    /// Applies an editing key or a typed character to the prompt's text.
    mutating func edit(_ change: (inout TextField) -> Void) {
        switch step {
        case .choosing, .confirmingRemoval: return
        case .naming(var field):
            change(&field)
            step = .naming(field)
        case .renaming(var field):
            change(&field)
            step = .renaming(field)
        case .sharing(var field, let readOnly):
            change(&field)
            step = .sharing(field, readOnly: readOnly)
        case .unsharing(var field):
            change(&field)
            step = .unsharing(field)
        case .accepting(var field):
            change(&field)
            step = .accepting(field)
        }
    }
}
