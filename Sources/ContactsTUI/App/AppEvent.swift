import ContactsModel
import ContactsStore
import Foundation
import Synchronization

/// Something that happened away from the keyboard, for the main loop to apply to the state.
enum AppEvent: Sendable {
    case activity(ContactsDevice.Activity)
    /// The device's sync status changed (``ContactsDevice/statusUpdates``).
    case status(DeviceStatus)
    /// The list's rows, the books, the conflict log and the count of records refused as tampered, read again
    /// from the store; `notes` describe what sync changed in the rows.
    case rowsLoaded(
        ContactListing, books: [AddressBook], conflicts: [ContactConflict], tampered: Int, keys: KeyTrust,
        notes: [String], select: UUID?, seconds: Double)
    case rowsFailed(String)
    /// Every field's matches of the list's search of `generation` (``EveryFieldSearch``); nil when it was
    /// cancelled for a newer one.
    case everyFieldSearched([Int]?, generation: Int)
    case everyFieldFailed(String, generation: Int)
    /// A manual back up or refresh ended; the error's message if it failed.
    case manualSyncFinished(SyncWork, error: String?)
    case dataDeleted(DeleteDataPrompt.Target, error: String?)
    /// An action of the books panel that needed the server ended.
    case bookActionFinished(AppState.Message, invitation: String?)
    /// A photo being downloaded to be shown: bytes so far of all.
    case photoProgress(name: String, received: Int64, total: Int64)
    /// A photo to show is on this device (its file), or could not be had (why).
    case photoReady(name: String, file: String?, error: String?)
}

/// Where tasks leave ``AppEvent``s for the main loop, which takes them between two key reads. Tasks never
/// touch the state or the terminal themselves: the main loop is their only reader, and ncurses is only ever
/// called from it.
final class AppInbox: Sendable {
    private let events = Mutex<[AppEvent]>([])

    func post(_ event: AppEvent) {
        events.withLock { $0.append(event) }
    }

    /// Everything posted since the last call, oldest first.
    func drain() -> [AppEvent] {
        events.withLock { events in
            defer { events.removeAll() }
            return events
        }
    }
}
