/// `POST /v1/databases/{scope}/zones/modify`: save and delete zones.
public struct ModifyZonesRequest: Codable, Sendable, Hashable {
    public var saves: [RecordZone]
    public var deletes: [RecordZone.ID]

    public init(saves: [RecordZone] = [], deletes: [RecordZone.ID] = []) {
        self.saves = saves
        self.deletes = deletes
    }

    /// Both lists may be left out (and are empty), but not sent as `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        saves = try container.decodeIfPresentNotNull([RecordZone].self, forKey: .saves) ?? []
        deletes = try container.decodeIfPresentNotNull([RecordZone.ID].self, forKey: .deletes) ?? []
    }
}

/// The per-item results of a zone modification.
public struct ModifyZonesResponse: Codable, Sendable, Hashable {
    /// A zone that could not be saved, and why.
    public struct FailedZoneSave: Codable, Sendable, Hashable {
        public var zone: RecordZone
        public var error: SyncError
        public init(zone: RecordZone, error: SyncError) {
            self.zone = zone
            self.error = error
        }
    }

    /// A zone that could not be deleted, and why.
    public struct FailedZoneDelete: Codable, Sendable, Hashable {
        public var zoneID: RecordZone.ID
        public var error: SyncError
        public init(zoneID: RecordZone.ID, error: SyncError) {
            self.zoneID = zoneID
            self.error = error
        }
    }

    public var savedZones: [RecordZone]
    public var failedZoneSaves: [FailedZoneSave]
    public var deletedZoneIDs: [RecordZone.ID]
    public var failedZoneDeletes: [FailedZoneDelete]

    public init(
        savedZones: [RecordZone] = [], failedZoneSaves: [FailedZoneSave] = [], deletedZoneIDs: [RecordZone.ID] = [],
        failedZoneDeletes: [FailedZoneDelete] = []
    ) {
        self.savedZones = savedZones
        self.failedZoneSaves = failedZoneSaves
        self.deletedZoneIDs = deletedZoneIDs
        self.failedZoneDeletes = failedZoneDeletes
    }
}

/// `POST /v1/databases/{scope}/zones/list`: every zone in the database.
public struct ListZonesResponse: Codable, Sendable, Hashable {
    public var zones: [RecordZone]
    public init(zones: [RecordZone]) { self.zones = zones }
}
