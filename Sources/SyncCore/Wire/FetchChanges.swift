/// Why a zone disappeared from a database. Mirrors `CKDatabase.DatabaseChange.Deletion.Reason`.
public enum ZoneDeletionReason: String, Codable, Sendable, Hashable {
    /// Deleted by a client: local copies should go too.
    case deleted
    /// Removed by the user through account management: delete local copies, do not re-upload.
    case purged
    /// The user reset their encrypted data: re-upload local data.
    case encryptedDataReset
}

/// `POST /v1/databases/{scope}/zones/changes`: which zones changed since a token.
public struct FetchDatabaseChangesRequest: Codable, Sendable, Hashable {
    /// The token from the previous answer; `nil` to start from the beginning.
    public var since: ServerChangeToken?
    /// Most zones to return; the server caps it at its limit.
    public var resultsLimit: Int?

    public init(since: ServerChangeToken? = nil, resultsLimit: Int? = nil) {
        self.since = since
        self.resultsLimit = resultsLimit
    }

    /// Both members may be left out, but not sent as `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        since = try container.decodeIfPresentNotNull(ServerChangeToken.self, forKey: .since)
        resultsLimit = try container.decodeIfPresentNotNull(Int.self, forKey: .resultsLimit)
    }
}

/// Zones that changed or disappeared since the request's token.
public struct FetchDatabaseChangesResponse: Codable, Sendable, Hashable {
    /// A zone that was deleted, and why.
    public struct Deletion: Codable, Sendable, Hashable {
        public var zoneID: RecordZone.ID
        public var reason: ZoneDeletionReason
        public init(zoneID: RecordZone.ID, reason: ZoneDeletionReason) {
            self.zoneID = zoneID
            self.reason = reason
        }
    }

    /// Zones created or holding changed records.
    public var modifications: [RecordZone.ID]
    public var deletions: [Deletion]
    /// Pass this as `since` next time.
    public var changeToken: ServerChangeToken
    /// More changes wait: fetch again with ``changeToken``.
    public var moreComing: Bool

    public init(
        modifications: [RecordZone.ID], deletions: [Deletion], changeToken: ServerChangeToken, moreComing: Bool
    ) {
        self.modifications = modifications
        self.deletions = deletions
        self.changeToken = changeToken
        self.moreComing = moreComing
    }
}

/// `POST /v1/databases/{scope}/records/changes`: a zone's record changes since a token.
public struct FetchZoneChangesRequest: Codable, Sendable, Hashable {
    public var zoneID: RecordZone.ID
    /// The token from the previous answer for this zone; `nil` to fetch the whole zone.
    public var since: ServerChangeToken?
    /// Most records and deletions to return; the server caps it at its limit.
    public var resultsLimit: Int?
    /// Leaves out the records whose latest version was saved by a request carrying this
    /// `X-Writer-ID`: an engine's own saves, which it knows already (deletions always come).
    public var excludingWriter: String?
    /// The fields the records carry (CloudKit's `desiredKeys`): nil for all, an empty list for none (system
    /// fields only). An app that shows a list asks for the fields it shows, leaving out assets and the rest.
    public var desiredKeys: [String]?

    public init(
        zoneID: RecordZone.ID, since: ServerChangeToken? = nil, resultsLimit: Int? = nil,
        excludingWriter: String? = nil,
        desiredKeys: [String]? = nil
    ) {
        self.zoneID = zoneID
        self.since = since
        self.resultsLimit = resultsLimit
        self.excludingWriter = excludingWriter
        self.desiredKeys = desiredKeys
    }

    /// `since` and `resultsLimit` may be left out, but not sent as `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        zoneID = try container.decode(RecordZone.ID.self, forKey: .zoneID)
        since = try container.decodeIfPresentNotNull(ServerChangeToken.self, forKey: .since)
        resultsLimit = try container.decodeIfPresentNotNull(Int.self, forKey: .resultsLimit)
        excludingWriter = try container.decodeIfPresentNotNull(String.self, forKey: .excludingWriter)
        desiredKeys = try container.decodeIfPresentNotNull([String].self, forKey: .desiredKeys)
    }
}

/// Records changed or deleted in a zone since the request's token, oldest change first.
public struct FetchZoneChangesResponse: Codable, Sendable, Hashable {
    /// A deleted record: its ID and type (a tombstone).
    public struct Deletion: Codable, Sendable, Hashable {
        public var recordID: RecordValue.ID
        public var recordType: String
        public init(recordID: RecordValue.ID, recordType: String) {
            self.recordID = recordID
            self.recordType = recordType
        }
    }

    public var modifications: [RecordValue]
    public var deletions: [Deletion]
    /// Pass this as `since` next time.
    public var changeToken: ServerChangeToken
    /// More changes wait: fetch again with ``changeToken``.
    public var moreComing: Bool

    public init(modifications: [RecordValue], deletions: [Deletion], changeToken: ServerChangeToken, moreComing: Bool) {
        self.modifications = modifications
        self.deletions = deletions
        self.changeToken = changeToken
        self.moreComing = moreComing
    }
}
