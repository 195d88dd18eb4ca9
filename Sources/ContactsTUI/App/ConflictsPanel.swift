import ContactsModel
import ContactsStore
import Foundation
import Terminal

/// The panel behind `C`: the conflict log (values that another device's edit overwrote), newest first,
/// where one key puts the selected entry's lost value back and another dismisses the entry.
public struct ConflictsPanel: Sendable, Equatable {
    /// The selected entry, counted in the state's conflicts.
    public var selection = 0
    /// The outcome of the last action, or why it was refused.
    public var notice: AppState.Message?

    public init(selection: Int = 0) {
        self.selection = selection
    }
}

/// Keys in the conflicts panel. Restoring and dismissing are effects for ``ContactsApp``.
extension AppState {
    mutating func conflicts(_ panel: inout ConflictsPanel, _ key: Key) -> Effect? {
        guard let command = KeyMap.conflicts.command(for: key) else {
            if case .character(let character) = key {
                panel.notice = Message("\(String(character)) does nothing here; press ? to see the keys.")
            }
            return nil
        }
        panel.notice = nil
        let selected = conflicts.indices.contains(panel.selection) ? conflicts[panel.selection] : nil
        switch command {
        case .down: panel.selection = min(panel.selection + 1, max(0, conflicts.count - 1))
        case .up: panel.selection = max(panel.selection - 1, 0)
        case .close: mode = .browsing
        case .restore, .dismiss:
            guard let selected else {
                panel.notice = Message("The log is empty: nothing to restore or dismiss.")
                return nil
            }
            if let refusal = refusal(toChange: selected.zoneID) {
                panel.notice = refusal
                return nil
            }
            return command == .restore ? .restoreConflict(selected) : .dismissConflict(selected)
        }
        return nil
    }

    /// The conflict log changed (a sync, or an action of the panel): keep the selection in range.
    public mutating func replaceConflicts(_ conflicts: [ContactConflict]) {
        self.conflicts = conflicts
        if case .conflicts(var panel) = mode {
            panel.selection = min(panel.selection, max(0, conflicts.count - 1))
            mode = .conflicts(panel)
        }
    }

    /// An action of the panel ended: its outcome in the panel (or the hint bar, if the panel was closed).
    public mutating func conflictActionFinished(_ notice: Message) {
        guard case .conflicts(var panel) = mode else {
            message = notice
            return
        }
        panel.notice = notice
        mode = .conflicts(panel)
    }
}
