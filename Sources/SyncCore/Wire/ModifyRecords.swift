/// How the server treats a save of a record that already exists. Mirrors `CKModifyRecordsOperation.RecordSavePolicy`.
public enum SavePolicy: String, Codable, Sendable, Hashable {
    /// Save only if the record's change tag matches the server's; otherwise fail with
    /// `serverRecordChanged`, carrying the server's record. The sent fields replace the stored ones.
    case ifServerRecordUnchanged
    /// Save without a change tag check, writing only the record's `changedKeys`
    /// (a changed key with no value removes the field); other fields keep their server values.
    case changedKeys
    /// Save without a change tag check, replacing every field.
    case allKeys
}

/// `POST /v1/databases/{scope}/records/modify`: save and delete records.
public struct ModifyRecordsRequest: Codable, Sendable, Hashable {
    public var saves: [RecordValue]
    public var deletes: [RecordValue.ID]
    public var savePolicy: SavePolicy
    /// When true, the request is atomic per zone: if any item of a zone fails, none of that
    /// zone's items is applied and the others fail with `batchRequestFailed`.
    public var atomic: Bool
    /// A client-chosen unique ID. Replaying a request with the same ID returns the first
    /// answer and applies nothing again, so a retry after a lost response is harmless.
    public var clientRequestID: String?
    /// The fields the answer's saved records carry (CloudKit's `desiredKeys`): nil for all, an empty
    /// list for none (only system fields, as a client that keeps what it sent needs). Errors carry
    /// their server records whole.
    public var desiredKeys: [String]?

    public init(
        saves: [RecordValue] = [], deletes: [RecordValue.ID] = [], savePolicy: SavePolicy = .ifServerRecordUnchanged,
        atomic: Bool = false, clientRequestID: String? = nil, desiredKeys: [String]? = nil
    ) {
        self.saves = saves
        self.deletes = deletes
        self.savePolicy = savePolicy
        self.atomic = atomic
        self.clientRequestID = clientRequestID
        self.desiredKeys = desiredKeys
    }

    /// Every member may be left out (and takes its default), but none may be sent as `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        saves = try container.decodeIfPresentNotNull([RecordValue].self, forKey: .saves) ?? []
        deletes = try container.decodeIfPresentNotNull([RecordValue.ID].self, forKey: .deletes) ?? []
        savePolicy =
            try container.decodeIfPresentNotNull(SavePolicy.self, forKey: .savePolicy) ?? .ifServerRecordUnchanged
        atomic = try container.decodeIfPresentNotNull(Bool.self, forKey: .atomic) ?? false
        clientRequestID = try container.decodeIfPresentNotNull(String.self, forKey: .clientRequestID)
        desiredKeys = try container.decodeIfPresentNotNull([String].self, forKey: .desiredKeys)
    }
}

/// The per-item results of a record modification.
public struct ModifyRecordsResponse: Codable, Sendable, Hashable {
    /// A record that could not be saved, and why.
    public struct FailedRecordSave: Codable, Sendable, Hashable {
        public var recordID: RecordValue.ID
        public var error: SyncError
        public init(recordID: RecordValue.ID, error: SyncError) {
            self.recordID = recordID
            self.error = error
        }
    }

    /// A record that could not be deleted, and why.
    public struct FailedRecordDelete: Codable, Sendable, Hashable {
        public var recordID: RecordValue.ID
        public var error: SyncError
        public init(recordID: RecordValue.ID, error: SyncError) {
            self.recordID = recordID
            self.error = error
        }
    }

    /// The records as the server stored them, with new change tags.
    public var savedRecords: [RecordValue]
    public var failedRecordSaves: [FailedRecordSave]
    public var deletedRecordIDs: [RecordValue.ID]
    public var failedRecordDeletes: [FailedRecordDelete]

    public init(
        savedRecords: [RecordValue] = [], failedRecordSaves: [FailedRecordSave] = [],
        deletedRecordIDs: [RecordValue.ID] = [],
        failedRecordDeletes: [FailedRecordDelete] = []
    ) {
        self.savedRecords = savedRecords
        self.failedRecordSaves = failedRecordSaves
        self.deletedRecordIDs = deletedRecordIDs
        self.failedRecordDeletes = failedRecordDeletes
    }
}
