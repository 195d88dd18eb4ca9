import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import SyncCore
import Terminal

extension ContactsApp {
    /// Carries out what a key asked for. Local edits are quick SQLite writes and happen here; anything that
    /// talks to the server runs in a task and reports back through the inbox.
    func perform(_ effect: AppState.Effect) {
        switch effect {
        case .quit:
            quitRequested = true
        case .add(let contact, let book):
            save { (try self.device.contacts.add(contact, to: book), "added") }
        case .update(let form):
            guard let original = form.original else { return }
            save { try self.saveEdit(of: original, to: form.contact()) }
        case .editInEditor(let original):
            do {
                // The editor has the terminal until it exits; syncs go on meanwhile and report afterwards.
                guard let edited = try terminal.handOver({ try ExternalEditor().edit(original) }) else {
                    state.message = AppState.Message("Nothing changed in \(original.name).")
                    return
                }
                save { try self.saveEdit(of: original, to: edited) }
            } catch {
                state.message = AppState.Message(TUIWords.say(error), isError: true)
            }
        case .openPhoto(let contact):
            startPhotoDownload(contact)
        case .delete(let row):
            do {
                try device.contacts.delete(row.id)
                state.log.append(
                    EventLog.Entry(date: Date(), text: "deleted \(row.name) (\(Self.recordName(row.id, in: row.book)))")
                )
                state.message = AppState.Message("Deleted \(row.name).")
                requestReload()
            } catch {
                state.message = AppState.Message(TUIWords.say(error), isError: true)
            }
        case .findDuplicates(let row):
            do {
                let group = try device.reader.duplicates().first { $0.contacts.contains { $0.id == row.id } }
                state.duplicatesFound(group, of: row)
            } catch {
                state.message = AppState.Message(TUIWords.say(error), isError: true)
            }
        case .merge(let group):
            do {
                let merged = try device.contacts.merge(group.contacts.map(\.id))
                logChange("merged \(group.contacts.count) contacts into", merged)
                state.message = AppState.Message("Merged \(group.contacts.count) contacts into \(merged.name).")
                requestReload(selecting: merged.id)
            } catch {
                state.message = AppState.Message(TUIWords.say(error), isError: true)
            }
        case .backUp:
            startManualSync(.send)
        case .refresh:
            startManualSync(.fetch)
        case .deleteLocalData:
            startDeletion(.local)
        case .deleteServerData:
            startDeletion(.server)
        case .createBook, .renameBook, .removeBook, .shareBook, .unshareBook, .acceptInvitation:
            performBookAction(effect)
        case .restoreConflict(let entry):
            resolveConflict {
                let contact = try self.device.contacts.restoreConflict(entry.id)
                let value = entry.lost.value.text.isEmpty ? "the empty value" : entry.lost.value.text
                return "Put \(value) back as \(contact.name)'s \(entry.fieldName); it syncs by itself."
            }
        case .dismissConflict(let entry):
            resolveConflict {
                try self.device.contacts.dismissConflict(entry.id)
                let kept = entry.kept.value.text.isEmpty ? "no \(entry.fieldName)" : entry.kept.value.text
                return "Dismissed; \(entry.contactName) keeps \(kept)."
            }
        }
    }

    /// Saves what an edit changed from `original` onto the contact as the store has it now (sync may have
    /// changed other fields meanwhile).
    private func saveEdit(of original: Contact, to edited: Contact) throws -> (contact: Contact, verb: String) {
        guard let current = try device.reader.contact(original.id) else {
            // Deleted on another device while it was being edited: the edit wins, as in a merge.
            return (try device.contacts.add(edited), "saved again (it was deleted elsewhere meanwhile)")
        }
        return (try device.contacts.update(current.applying(changesFrom: original, to: edited)), "saved")
    }

    /// Runs a save from the form: on success logs it, closes the form and selects the contact; on failure the
    /// form stays open and says why.
    private func save(_ body: () throws -> (contact: Contact, verb: String)) {
        do {
            let (saved, verb) = try body()
            logChange(verb, saved)
            state.saved(saved.name, id: saved.id)
            requestReload(selecting: saved.id)
        } catch {
            state.saveFailed(TUIWords.say(error))
        }
    }

    /// Restores or dismisses a conflict (a quick local write, synced like an edit) and reports the outcome;
    /// the log and the list are read again either way.
    private func resolveConflict(_ body: () throws -> String) {
        let notice: AppState.Message
        do {
            notice = AppState.Message(try body())
        } catch {
            notice = AppState.Message(TUIWords.say(error), isError: true)
        }
        state.log.append(EventLog.Entry(date: Date(), text: notice.text, isError: notice.isError))
        state.conflictActionFinished(notice)
        requestReload()
    }

    /// "Contacts/1F2A9C3E": the zone (the start of a book's) and the start of the record name, as the event log
    /// shows records.
    nonisolated static func recordName(_ id: UUID, in book: RecordZone.ID = Contact.zoneID) -> String {
        "\(book.zoneName.prefix(13))/\(id.uuidString.prefix(8))"
    }

    private func logChange(_ verb: String, _ contact: Contact) {
        let book = (try? device.reader.book(of: contact.id))?.zoneID ?? Contact.zoneID
        state.log.append(
            EventLog.Entry(date: Date(), text: "\(verb) \(contact.name) (\(Self.recordName(contact.id, in: book)))"))
    }

    // MARK: Manual sync

    /// Gets the contact's photo (downloading it, with progress, when this device does not have it yet),
    /// then shows it (``showPhoto(of:file:error:)``).
    private func startPhotoDownload(_ contact: Contact) {
        state.message = AppState.Message("Opening \(contact.name)'s photo…")
        let device = self.device
        let inbox = self.inbox
        let name = contact.name
        Task.detached {
            do {
                let file = try await device.contacts.photoFile(of: contact.id) { received, total in
                    inbox.post(.photoProgress(name: name, received: received, total: total))
                }
                inbox.post(.photoReady(name: name, file: file.path, error: nil))
            } catch {
                inbox.post(.photoReady(name: name, file: nil, error: SyncProblem.describe(anyError: error)))
            }
        }
    }

    /// Hands the terminal to the photo viewer on the photo's file, or says why there is nothing to show.
    func showPhoto(of name: String, file: String?, error: String?) {
        guard let file else {
            let text = "Could not get \(name)'s photo: \(error ?? "unknown error")"
            state.log.append(EventLog.Entry(date: Date(), text: text, isError: true))
            state.message = AppState.Message(text, isError: true)
            return
        }
        do {
            try terminal.handOver { try PhotoViewer().open(file) }
            state.message = AppState.Message("Showed \(name)'s photo.")
        } catch {
            state.message = AppState.Message(TUIWords.say(error), isError: true)
        }
    }

    private func startManualSync(_ work: SyncWork) {
        guard state.status.manualRun == nil else {
            state.message = AppState.Message("A back up or refresh is already running.")
            return
        }
        refreshFromStore()
        state.status.manualRun = work
        state.message = AppState.Message(
            work == .send
                ? "Backing up \(TextFormatting.plural(state.status.pendingChanges, "change"))…"
                : "Fetching changes from the server…")
        state.log.append(EventLog.Entry(date: Date(), text: work == .send ? "back up now" : "refresh now"))
        let device = self.device
        let inbox = self.inbox
        Task.detached {
            do {
                try await device.sync(fetch: work == .fetch, send: work == .send)
                inbox.post(.manualSyncFinished(work, error: nil))
            } catch {
                inbox.post(.manualSyncFinished(work, error: SyncProblem.describe(anyError: error)))
            }
        }
    }

    func finishManualSync(_ work: SyncWork, error: String?) {
        state.status.manualRun = nil
        refreshFromStore()
        let name = work == .send ? "Back up" : "Refresh"
        if let error {
            state.status.manualFailure = SyncStatus.Failure(date: Date(), message: error)
            // With a scheduler, the device logs each send's and fetch's outcome already, once.
            if !device.syncsAutomatically {
                state.log.append(
                    EventLog.Entry(date: Date(), text: "\(name.lowercased()) failed: \(error)", isError: true))
            }
            let kept =
                state.status.pendingChanges > 0
                ? "; \(TextFormatting.plural(state.status.pendingChanges, "change")) kept on this device" : ""
            showResult(AppState.Message("\(name) failed: \(error)\(kept).", isError: true))
        } else {
            state.status.manualFailure = nil
            showResult(AppState.Message(work == .send ? "Backed up." : "Up to date."))
        }
    }

    /// Shows `message` unless the user is busy with a form or a question, which it must not interrupt.
    private func showResult(_ message: AppState.Message) {
        if case .browsing = state.mode { state.message = message }
    }

    // MARK: Deleting data

    private func startDeletion(_ target: DeleteDataPrompt.Target) {
        state.message = AppState.Message(
            target == .local ? "Deleting this device's data…" : "Deleting every contact on the server…")
        let device = self.device
        let inbox = self.inbox
        Task.detached {
            do {
                if target == .local {
                    try await device.account.deleteLocalData()
                } else {
                    try await device.account.deleteServerData()
                }
                inbox.post(.dataDeleted(target, error: nil))
            } catch {
                inbox.post(.dataDeleted(target, error: TUIWords.say(error)))
            }
        }
    }

    func finishDeletion(_ target: DeleteDataPrompt.Target, error: String?) {
        requestReload()
        let what = target == .local ? "this device's data" : "the server's data"
        if let error {
            state.log.append(EventLog.Entry(date: Date(), text: "deleting \(what) failed: \(error)", isError: true))
            showResult(AppState.Message("Deleting \(what) failed: \(error)", isError: true))
        } else {
            state.log.append(EventLog.Entry(date: Date(), text: "deleted \(what)"))
            showResult(
                AppState.Message(
                    target == .local
                        ? "Deleted this device's data; the next sync downloads the server's copy."
                        : "Deleted every contact on the server; other devices remove theirs when they sync."))
        }
    }

    // MARK: Reloading the list

    /// Asks for the list to be read again from the store; `fromSync` notes in the log what changed.
    func requestReload(selecting id: UUID? = nil, fromSync: Bool = false) {
        reloadWanted = true
        if fromSync { reloadNotes = true }
        if let id { reloadSelection = id }
    }

    func startReloadIfDue() {
        guard reloadWanted, !reloadInFlight, ContinuousClock.now >= nextReload else { return }
        reloadWanted = false
        reloadInFlight = true
        // Only a whole list can say what sync changed in it.
        let previous = reloadNotes && state.list.isComplete ? state.list.rows : nil
        let select = reloadSelection
        reloadNotes = false
        reloadSelection = nil
        let store = device.reader
        let inbox = self.inbox
        Task.detached {
            let start = ContinuousClock.now
            do {
                let rows = try store.listing()
                let books = try store.books()
                let conflicts = try store.conflicts()
                let tampered = try store.tamperedCount()
                let keys = try store.keyTrust()
                let notes = previous.map { ContactsApp.describeChanges(from: $0, to: rows) } ?? []
                let elapsed = ContinuousClock.now - start
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                inbox.post(
                    .rowsLoaded(
                        rows, books: books, conflicts: conflicts, tampered: tampered, keys: keys, notes: notes,
                        select: select,
                        seconds: seconds))
            } catch {
                inbox.post(.rowsFailed(TUIWords.say(error)))
            }
        }
    }

    /// What sync changed in the list, for the event log: contacts received, removed and renamed, with their
    /// record IDs; a summary when there are many. Both lists are in list order, so they are walked side by
    /// side, with nothing held beside them but what changed: a contact renamed to another sort key is met
    /// once on each side, and found by its ID among the few that changed.
    public nonisolated static func describeChanges(from old: ContactListing, to new: ContactListing) -> [String] {
        var added: [Int] = []
        var removed: [Int] = []
        var renamed: [(was: Int, is: Int)] = []
        var i = 0
        var j = 0
        while i < old.count || j < new.count {
            let order = i == old.count ? 1 : j == new.count ? -1 : ContactListing.order(old, i, new, j)
            if order == 0 {
                if old.name(at: i) != new.name(at: j) { renamed.append((i, j)) }
                i += 1
                j += 1
            } else if order > 0 {
                added.append(j)
                j += 1
            } else {
                removed.append(i)
                i += 1
            }
        }
        // A contact renamed to another sort key is among both the added and the removed.
        let removedByID =
            added.isEmpty ? [:] : Dictionary(removed.map { (old.ids[$0], $0) }, uniquingKeysWith: { a, _ in a })
        let moved = added.compactMap { index in removedByID[new.ids[index]].map { (was: $0, is: index) } }
        if !moved.isEmpty {
            let movedNew = Set(moved.map(\.is))
            let movedOld = Set(moved.map(\.was))
            added.removeAll { movedNew.contains($0) }
            removed.removeAll { movedOld.contains($0) }
            renamed = (renamed + moved.filter { old.name(at: $0.was) != new.name(at: $0.is) }).sorted { $0.is < $1.is }
        }
        func record(_ rows: ContactListing, _ index: Int) -> String {
            recordName(rows.ids[index], in: rows.book(at: index))
        }
        var notes: [String] = []
        for index in added.prefix(3) { notes.append("received \(new.name(at: index)) (\(record(new, index)))") }
        for change in renamed.prefix(3) {
            notes.append(
                "renamed by sync: \(old.name(at: change.was)) → \(new.name(at: change.is)) (\(record(new, change.is)))")
        }
        for index in removed.prefix(3) {
            notes.append("removed by sync: \(old.name(at: index)) (\(record(old, index)))")
        }
        if added.count > 3 || removed.count > 3 || renamed.count > 3 {
            notes.append(
                "sync changed the list: \(added.count) received, \(renamed.count) renamed, \(removed.count) removed")
        }
        return notes
    }
}
