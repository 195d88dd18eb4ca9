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
}

extension SyncEngineDelegate {
    public func nextFetchChangesOptions(_ context: SyncEngine.FetchChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.FetchChangesOptions
    {
        context.options
    }
}
