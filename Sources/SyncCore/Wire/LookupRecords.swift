/// `POST /v1/databases/{scope}/records/lookup`: fetch records by ID.
public struct LookupRecordsRequest: Codable, Sendable, Hashable {
    public var recordIDs: [Record.ID]
    public init(recordIDs: [Record.ID]) { self.recordIDs = recordIDs }
}

/// The records found, and a failure (`unknownItem`, `zoneNotFound`) for each that was not.
public struct LookupRecordsResponse: Codable, Sendable, Hashable {
    /// A record that could not be looked up, and why.
    public struct Failure: Codable, Sendable, Hashable {
        public var recordID: Record.ID
        public var error: SyncError
        public init(recordID: Record.ID, error: SyncError) {
            self.recordID = recordID
            self.error = error
        }
    }

    public var records: [Record]
    public var failures: [Failure]

    public init(records: [Record], failures: [Failure]) {
        self.records = records
        self.failures = failures
    }
}
