import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import Terminal

/// The full-screen app: owns the terminal and the device, and runs the loop read a key → update the state →
/// draw it.
///
/// The loop never waits on the network. Syncs run in tasks, and those tasks, like the device's activity and
/// the scheduler's statuses, leave ``AppEvent``s in an inbox that the loop empties between two key reads;
/// a key read waits at most 50 ms, so changes fetched from other devices appear within that time, and every
/// curses call stays on the main actor.
@MainActor
public final class ContactsApp {
    let device: ContactsDevice
    let terminal: CursesTerminal
    var state: AppState
    let inbox = AppInbox()
    var needsRender = true
    var quitRequested = false
    private var tasks: [Task<Void, Never>] = []
    /// The device's last status, to tell when its conflict or tamper count moves.
    private var deviceStatus: DeviceStatus?
    /// Tells a first push connection from a reconnection.
    var pushConnection = PushConnectionTracker()
    /// Starts the zero-setup server again when it dies, and reconnects the engine when it is back.
    let serverKeeper: LocalServerKeeper?

    // Reloading the list: at most one read in flight, and not more often than the last read's cost allows,
    // so that a fetch of 100,000 contacts in pages does not spend its time redrawing.
    var reloadWanted = false
    var reloadInFlight = false
    var reloadNotes = false
    var reloadSelection: UUID?
    var nextReload = ContinuousClock.now
    /// A selected contact that the store no longer has, so that it is not asked for again and again.
    var missingDetails: UUID?
    /// The search through every field that runs (its list generation), at most one at a time; and whether
    /// it should stop because a newer search is wanted.
    var everyFieldSearchRunning: Int?
    let everyFieldCancel = EveryFieldCancel()

    /// An app for `device`. `startupProblem` says why it opened without a server, for the status pane;
    /// `serverKeeper` keeps the zero-setup local server running while the app is open.
    public init(
        device: ContactsDevice, startupProblem: String? = nil, terminal: CursesTerminal? = nil,
        serverKeeper: LocalServerKeeper? = nil
    ) {
        self.device = device
        self.serverKeeper = serverKeeper
        self.terminal = terminal ?? CursesTerminal(inputTimeout: 50)
        state = AppState(width: 0, height: 0, deviceName: device.name)
        if let startupProblem {
            state.status.startupProblem = SyncStatus.Failure(date: Date(), message: startupProblem)
            state.log.append(EventLog.Entry(date: Date(), text: startupProblem, isError: true))
        }
    }

    /// Runs until the user quits. The terminal is given back on return, on a throw, and on signals.
    public func run() async throws {
        try terminal.start()
        defer { terminal.stop() }
        // Listening first, so that no change made while the names are read goes unnoticed.
        subscribe()
        defer {
            for task in tasks { task.cancel() }
        }
        let size = terminal.size
        // The names that fill the screen first; a large list follows from a background read.
        var loaded = try AppState.loading(
            from: device.reader, width: size.columns, height: size.rows, deviceName: device.name,
            unicode: terminal.supportsUnicode, firstRows: max(500, size.rows * 4))
        loaded.status = state.status
        loaded.log = state.log
        loaded.searchesEveryField = true
        state = loaded
        if !state.list.isComplete { requestReload() }
        refreshFromStore()
        var lastTick = ContinuousClock.now
        while !quitRequested {
            if let key = terminal.readKey() { handle(key) }
            let events = inbox.drain()
            for event in events { apply(event) }
            if !events.isEmpty { refreshFromStore() }
            startReloadIfDue()
            startEveryFieldSearchIfWanted()
            if ContinuousClock.now - lastTick >= .seconds(1) {
                // Ages ("5 s ago") and the store's counts move on even when nothing is reported.
                lastTick = ContinuousClock.now
                refreshFromStore()
                needsRender = true
            }
            loadDetailsIfNeeded()
            if needsRender {
                state.now = Date()
                terminal.draw(Renderer.render(state))
                needsRender = false
            }
            await Task.yield()
        }
    }

    // MARK: Keys

    private func handle(_ key: Key) {
        needsRender = true
        if key == .resize {
            let size = terminal.size
            state.resize(width: size.columns, height: size.rows)
            return
        }
        guard let effect = state.handle(key) else { return }
        perform(effect)
    }

    private func loadDetailsIfNeeded() {
        guard let id = state.detailsToLoad, id != missingDetails else { return }
        if let contact = try? device.reader.contact(id) {
            state.details = contact
            needsRender = true
        } else {
            missingDetails = id
        }
    }

    // MARK: What happens elsewhere

    private func subscribe() {
        let inbox = self.inbox
        let activity = device.activity()
        tasks.append(
            Task.detached {
                for await event in activity { inbox.post(.activity(event)) }
            })
        if let serverKeeper {
            tasks.append(
                Task.detached {
                    await serverKeeper.run { note in
                        let text = TUIWords.say(note)
                        inbox.post(.activity(note.isError ? .failure(text, date: Date()) : .event(text, date: Date())))
                    }
                })
        }
        // The device's status, whichever engines it runs: deleting local data replaces them, not this stream.
        let statusUpdates = device.statusUpdates
        tasks.append(
            Task.detached {
                for await status in statusUpdates { inbox.post(.status(status)) }
            })
    }

    private func apply(_ event: AppEvent) {
        needsRender = true
        switch event {
        case .activity(.event(let text, let date)):
            state.log.append(EventLog.Entry(date: date, text: text))
        case .activity(.failure(let text, let date)):
            state.log.append(EventLog.Entry(date: date, text: text, isError: true))
        case .activity(.contactsChanged):
            requestReload(fromSync: true)
        case .activity(.accountChanged):
            state.log.append(EventLog.Entry(date: Date(), text: "account changed"))
        case .status(let status):
            if status.scheduler != state.status.scheduler {
                if let scheduler = status.scheduler { noteSchedulerChanges(scheduler) }
                state.status.scheduler = status.scheduler
                state.status.schedulerStatusDate = Date()
            }
            // The conflict log or the tampered records changed: the panels read them again.
            if let previous = deviceStatus,
                status.conflictCount != previous.conflictCount || status.tamperedCount != previous.tamperedCount
                    || status.refusedKeys != previous.refusedKeys
            {
                requestReload()
            }
            // Said once, on the message line, when the device first finds its server too old.
            if let warning = status.serverWarning, deviceStatus?.serverWarning != warning {
                state.message = AppState.Message("Warning: " + warning, isError: true)
            }
            deviceStatus = status
        case .rowsLoaded(let rows, let books, let conflicts, let tampered, let keys, let notes, let select, let seconds):
            reloadInFlight = false
            nextReload = .now + .seconds(max(0.1, seconds * 3))
            state.replaceRows(rows, selecting: select)
            state.replaceBooks(books)
            state.replaceConflicts(conflicts)
            state.tamperedCount = tampered
            state.keys = keys
            // The selected contact may have changed too.
            state.details = nil
            missingDetails = nil
            let now = Date()
            for note in notes { state.log.append(EventLog.Entry(date: now, text: note)) }
        case .bookActionFinished(let notice, let invitation):
            state.log.append(EventLog.Entry(date: Date(), text: notice.text, isError: notice.isError))
            if let invitation { state.log.append(EventLog.Entry(date: Date(), text: "invitation: \(invitation)")) }
            state.bookActionFinished(notice, invitation: invitation)
        case .rowsFailed(let message):
            reloadInFlight = false
            state.log.append(
                EventLog.Entry(date: Date(), text: "could not read the contacts: \(message)", isError: true))
        case .everyFieldSearched(let positions, let generation):
            everyFieldSearchRunning = nil
            if let positions { state.showEveryField(positions, generation: generation) }
        case .everyFieldFailed(let message, let generation):
            everyFieldSearchRunning = nil
            state.list.giveUpEveryField(generation: generation)
            state.log.append(
                EventLog.Entry(date: Date(), text: "could not search every field: \(message)", isError: true))
        case .manualSyncFinished(let work, let error):
            finishManualSync(work, error: error)
        case .dataDeleted(let target, let error):
            finishDeletion(target, error: error)
        case .photoProgress(let name, let received, let total):
            state.message = AppState.Message(
                "Downloading \(name)'s photo: \(TextFormatting.bytes(received)) of \(TextFormatting.bytes(total))…")
        case .photoReady(let name, let file, let error):
            showPhoto(of: name, file: file, error: error)
        }
    }

    /// Logs what a new scheduler status says about the push socket that the last one did not, and notes a
    /// reconnection for the status pane. (Each send's and fetch's outcome comes from the device, once.)
    private func noteSchedulerChanges(_ status: SyncSchedule) {
        guard let change = pushConnection.observe(pushConnected: status.pushConnected) else { return }
        if change == .reconnected { state.status.reconnectedAt = Date() }
        state.log.append(EventLog.Entry(date: Date(), text: change.text))
    }

    /// Reads what the status pane shows from the store: cheap counts and settings.
    func refreshFromStore() {
        let store = device.reader
        var status = state.status
        status.pendingChanges = (try? store.pendingCount()) ?? status.pendingChanges
        status.storedLastSync = (try? store.setting(.lastSync)).flatMap { $0.flatMap(Double.init) }.map {
            Date(timeIntervalSince1970: $0)
        }
        status.account = device.isSignedIn ? ((try? store.setting(.username)) ?? nil) ?? "signed in" : nil
        status.server = (try? store.setting(.serverURL)) ?? nil
        status.fetchedSoFar = device.fetchedSoFar
        if status != state.status {
            state.status = status
            needsRender = true
        }
    }
}

extension AppState {
    /// The first screen's state: the names from `store` (details load on demand). With `firstRows`, only that
    /// many are read, enough to fill the screen at once; the list is then marked incomplete, and the app reads
    /// the rest in the background.
    public static func loading(
        from store: ContactsReader, width: Int, height: Int, deviceName: String, unicode: Bool, firstRows: Int? = nil
    ) throws -> AppState {
        let rows = try store.listing(limit: firstRows)
        var state = AppState(width: width, height: height, deviceName: deviceName, unicode: unicode)
        state.list = ContactList(rows)
        state.books = try store.books()
        state.conflicts = try store.conflicts()
        state.tamperedCount = try store.tamperedCount()
        state.keys = try store.keyTrust()
        if let firstRows, rows.count >= firstRows { state.list.isComplete = false }
        return state
    }
}
