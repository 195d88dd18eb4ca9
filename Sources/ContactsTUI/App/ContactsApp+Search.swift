import ContactsStore
import Foundation
import Synchronization

extension ContactsApp {
    /// Starts the list's search through every field (``EveryFieldSearch``) when it waits for one and none
    /// runs; a running one for an older generation (the search or the list changed since) is told to stop,
    /// and the newest starts once it has.
    func startEveryFieldSearchIfWanted() {
        let wanted = state.list.pendingSearch?.generation
        everyFieldCancel.want(wanted)
        guard everyFieldSearchRunning == nil, let search = EveryFieldSearch(state.list) else { return }
        let generation = search.pending.generation
        everyFieldSearchRunning = generation
        let store = device.reader
        let inbox = self.inbox
        let cancel = everyFieldCancel
        Task.detached {
            do {
                let positions = try search.run(in: store) { !cancel.wants(generation) }
                inbox.post(.everyFieldSearched(positions, generation: generation))
            } catch {
                inbox.post(.everyFieldFailed(TUIWords.say(error), generation: generation))
            }
        }
    }
}

/// Which generation of the list's search is still wanted, for a search through every field to stop when a
/// newer one is.
final class EveryFieldCancel: Sendable {
    private let wanted = Mutex<Int?>(nil)

    func want(_ generation: Int?) {
        wanted.withLock { $0 = generation }
    }

    func wants(_ generation: Int) -> Bool {
        wanted.withLock { $0 == generation }
    }
}
