import ContactsModel
import Foundation
import SyncCore
import SyncKit

/// A sync on demand, as `contacts sync` runs one; a device with automatic sync also lets its scheduler decide.
extension ContactsDevice {
    /// One manual sync: fetch, then send; conflicts found while sending are merged and sent again.
    /// When something was sent, a last fetch brings this device's token past its own changes (and
    /// picks up what others changed meanwhile), so that the next sync fetches only what is new.
    ///
    /// - Throws: ``DeviceError/notSignedIn`` at once, changing nothing, on a device without a session: it
    ///   could fetch and send nothing, and must not record a sync that did not happen.
    public func sync(fetch: Bool = true, send: Bool = true) async throws {
        guard isSignedIn else { throw DeviceError.notSignedIn }
        // Beside the sync, not before it: a remote server's answer costs no round trip of its own.
        async let serverVersion: Void = checkServerVersionOnce()
        // The keys the sync will seal and open with, fetched beside its first fetch rather than one
        // request after another when the first value needs them.
        async let keysFetched: Void = prepareKeys()
        do {
            // Both databases at once: a sync waits for the slower of the two fetches, not for their sum.
            if fetch { try await fetchBoth() }
            await keysFetched
            let sending = send && engines.contains { $0.state.hasPendingUntrackedChanges }
            if send {
                try await sendUntilSettled(engine)
                try await sendUntilSettled(sharedEngine)
            }
            if fetch && sending { try await fetchBoth() }
            if fetch && send { try await books.keepSharedBookKeys() }
            // Bookkeeping, as the sync's own: not worth a flush of its own (see `ContactStore.write`).
            try store.write(durable: false) { transaction in
                try ContactStore.setSetting(.lastSync, String(Date().timeIntervalSince1970), transaction.db)
                try ContactStore.setSetting(.lastError, nil, transaction.db)
            }
            // After a large upload, the emptied outbox's pages.
            if sending { try store.releaseFreePages() }
            statusBroadcast.update { $0.lastOutcome = DeviceStatus.Outcome(date: Date()) }
            await serverVersion
        } catch {
            // An older server is most worth telling about when the sync failed.
            await keysFetched
            await serverVersion
            let error = try explained(error)
            statusBroadcast.update { $0.lastOutcome = DeviceStatus.Outcome(date: Date(), failure: "\(error)") }
            try? store.write { transaction in
                try ContactStore.setSetting(.lastError, "\(error)", transaction.db)
                try ContactStore.setSetting(.lastErrorDate, String(Date().timeIntervalSince1970), transaction.db)
            }
            throw error
        }
    }

    /// Fetches the account's and the own zones' keys into the engines' keyring (``Keyring/prepare(for:)``).
    /// A failure is left to the first use of a key, which says why (a passphrase changed elsewhere, say).
    private func prepareKeys() async {
        let database = engine.database
        guard isSignedIn, let keyring = database.keyring else { return }
        try? await keyring.prepare(for: database)
    }

    private func fetchBoth() async throws {
        let (privateEngine, sharedEngine) = (engine, self.sharedEngine)
        async let shared: Void = sharedEngine.fetchChanges()
        try await privateEngine.fetchChanges()
        try await shared
    }

    /// A missing passphrase, said in the app's terms rather than the library's.
    private func explained(_ error: any Error) throws -> any Error {
        guard let error = error as? SyncError, error.code == .notAuthenticated, isSignedIn,
            try store.setting(.passphrase) == nil
        else { return error }
        return DeviceError.noPassphrase
    }

    /// Sends; a conflict, a missing zone or a missing record is fixed by the delegate and the
    /// change is queued again, so a second or third send finishes the job.
    private func sendUntilSettled(_ engine: SyncEngine) async throws {
        guard engine.state.hasPendingUntrackedChanges || !engine.state.pendingDatabaseChanges.isEmpty else { return }
        for attempt in 1...4 {
            do {
                try await engine.sendChanges()
                return
            } catch let error as SyncError
                where attempt < 4 && [.serverRecordChanged, .zoneNotFound, .unknownItem].contains(error.code)
            {
                continue
            }
        }
    }
}
