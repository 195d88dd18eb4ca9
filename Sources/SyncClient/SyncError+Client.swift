import SyncCore

extension SyncError {
    /// For `serverRecordChanged`: the record as the server has it now (`CKError.serverRecord`).
    public var serverRecord: Record? { serverRecordValue.map(Record.init) }

    /// For `serverRecordChanged` from a sync engine's send: the record as this device sent it
    /// (`CKError.clientRecord`).
    public var clientRecord: Record? { clientRecordValue.map(Record.init) }

    /// For `serverRecordChanged` from a sync engine's send: the record this device's changes were made to,
    /// as it last came from the server, with the sent changes undone (`CKError.ancestorRecord`); `nil` for
    /// a record never saved before. A three-way merge compares the client's and the server's records with it.
    public var ancestorRecord: Record? { ancestorRecordValue.map(Record.init) }

    /// For `requestRateLimited`, `serviceUnavailable` and `zoneBusy`: how long to wait before
    /// retrying (`CKError.retryAfterSeconds`).
    public var retryAfterSeconds: Double? { retryAfter }

    /// For `partialFailure`: each failed item's error, keyed by its `Record.ID` or `RecordZone.ID`
    /// (`CKError.partialErrorsByItemID`); `nil` for other errors.
    public var partialErrorsByItemID: [AnyHashable: any Error]? {
        guard code == .partialFailure else { return nil }
        var errors: [AnyHashable: any Error] = [:]
        for (id, error) in partialErrorsByRecordID { errors[id] = error }
        for (id, error) in partialErrorsByZoneID { errors[id] = error }
        return errors
    }
}
