/// What an app implements to sync with a ``SyncEngine``. Mirrors `CKSyncEngineDelegate`.
public protocol SyncEngineDelegate: AnyObject, Sendable {
    /// Handles one event. Events arrive one at a time, in order; the next waits for this to return.
    ///
    /// Do not await `fetchChanges()` or `sendChanges()` here: they wait for this very call to
    /// finish, so they throw instead. Start them in `Task.detached` if needed.
    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async

    /// The next batch of record changes to send, or nil when done. Only changes inside
    /// `context.options.scope` may be returned.
    func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.RecordZoneChangeBatch?

    /// The options for the next fetch request; by default, the fetch's own options.
    func nextFetchChangesOptions(_ context: SyncEngine.FetchChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.FetchChangesOptions

    /// The sealed version (``Record/sealedVersion``) of the last server record the app keeps for each of
    /// `recordIDs`, for records of sealed types (``SealedRecordTypes``) about to be handed over: one below it
    /// is refused as a rollback (`recordTampered`, reason `rollback`). Asked once per fetched page, and for
    /// the server records of a sent batch's conflicts (a conflict's server record below it comes without its
    /// server record, saying why); leave out records the app keeps none of. By default nothing is known, and
    /// nothing is refused as a rollback.
    func lastKnownSealedVersions(of recordIDs: [Record.ID], syncEngine: SyncEngine) async -> [Record.ID: UInt64]
}

extension SyncEngineDelegate {
    public func nextFetchChangesOptions(_ context: SyncEngine.FetchChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.FetchChangesOptions
    {
        context.options
    }

    public func lastKnownSealedVersions(of recordIDs: [Record.ID], syncEngine: SyncEngine) async
        -> [Record.ID: UInt64]
    {
        [:]
    }
}
