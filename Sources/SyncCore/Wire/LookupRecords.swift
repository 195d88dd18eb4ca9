/// `POST /v1/databases/{scope}/records/lookup`: fetch records by ID.
public struct LookupRecordsRequest: Codable, Sendable, Hashable {
    public var recordIDs: [RecordValue.ID]
    public init(recordIDs: [RecordValue.ID]) { self.recordIDs = recordIDs }
}

/// The records found, and a failure (`unknownItem`, `zoneNotFound`) for each that was not.
public struct LookupRecordsResponse: Codable, Sendable, Hashable {
    /// A record that could not be looked up, and why.
    public struct Failure: Codable, Sendable, Hashable {
        public var recordID: RecordValue.ID
        public var error: SyncError
        public init(recordID: RecordValue.ID, error: SyncError) {
            self.recordID = recordID
            self.error = error
        }
    }

    public var records: [RecordValue]
    public var failures: [Failure]

    public init(records: [RecordValue], failures: [Failure]) {
        self.records = records
        self.failures = failures
    }
}
