import SyncClient
import SyncCore

extension SyncEngine {
    /// One request's worth of record changes. Mirrors `CKSyncEngine.RecordZoneChangeBatch`.
    public struct RecordZoneChangeBatch: Sendable {
        /// CKSyncEngine's batch size: saves plus deletes in one request.
        public static let defaultMaximumCount = 250

        public var recordsToSave: [Record]
        public var recordIDsToDelete: [Record.ID]
        /// If true, one failure in a zone fails the zone's other changes with `batchRequestFailed`.
        public var atomicByZone: Bool

        /// A batch of exactly these changes; keep within the server's limits (or get `limitExceeded`,
        /// which the engine answers by splitting the batch).
        public init(
            recordsToSave: [Record] = [], recordIDsToDelete: [Record.ID] = [], atomicByZone: Bool = false
        ) {
            self.recordsToSave = recordsToSave
            self.recordIDsToDelete = recordIDsToDelete
            self.atomicByZone = atomicByZone
        }

        /// Builds the next batch from pending changes, in order, up to 250 changes.
        ///
        /// `recordProvider` returns the record to save for an ID, or nil to skip it (the app no
        /// longer has it; remove the pending change). Returns nil when there is nothing to send.
        public init?(
            pendingChanges: [PendingRecordZoneChange], maximumCount: Int = defaultMaximumCount,
            recordProvider: @Sendable (Record.ID) async -> Record?
        ) async {
            var saves: [Record] = []
            var deletes: [Record.ID] = []
            for change in pendingChanges {
                if saves.count + deletes.count >= maximumCount { break }
                switch change {
                case .saveRecord(let id):
                    if let record = await recordProvider(id) { saves.append(record) }
                case .deleteRecord(let id):
                    deletes.append(id)
                }
            }
            if saves.isEmpty && deletes.isEmpty { return nil }
            self.init(recordsToSave: saves, recordIDsToDelete: deletes)
        }
    }
}

extension SyncEngine.RecordZoneChangeBatch {
    /// The owners of the zones the batch changes, sorted.
    var owners: [String] {
        Set((recordsToSave.map(\.recordID) + recordIDsToDelete).map(\.zoneID.ownerName)).sorted()
    }

    /// The part of the batch in `owner`'s zones.
    func only(owner: String) -> Self {
        Self(
            recordsToSave: recordsToSave.filter { $0.recordID.zoneID.ownerName == owner },
            recordIDsToDelete: recordIDsToDelete.filter { $0.zoneID.ownerName == owner }, atomicByZone: atomicByZone)
    }
}
