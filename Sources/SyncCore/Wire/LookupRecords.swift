/// `POST /v1/databases/{scope}/records/lookup`: fetch records by ID.
public struct LookupRecordsRequest: Codable, Sendable, Hashable {
    public var recordIDs: [RecordValue.ID]
    /// The fields the records carry (CloudKit's `desiredKeys`): nil for all, an empty list for none.
    public var desiredKeys: [String]?

    public init(recordIDs: [RecordValue.ID], desiredKeys: [String]? = nil) {
        self.recordIDs = recordIDs
        self.desiredKeys = desiredKeys
    }

    private enum CodingKeys: String, CodingKey {
        case recordIDs, desiredKeys
    }

    /// `desiredKeys` may be left out, but not sent as `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        recordIDs = try container.decode([RecordValue.ID].self, forKey: .recordIDs)
        desiredKeys = try container.decodeIfPresentNotNull([String].self, forKey: .desiredKeys)
    }
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
