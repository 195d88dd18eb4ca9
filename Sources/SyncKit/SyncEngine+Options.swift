import SyncClient
import SyncCore

extension SyncEngine {
    /// Why a sync runs: the engine decided (`scheduled`) or the app asked (`manual`).
    public enum SyncReason: Sendable, Hashable {
        case scheduled
        case manual
    }

    /// What to fetch. Mirrors `CKSyncEngine.FetchChangesOptions`.
    public struct FetchChangesOptions: Sendable, Hashable {
        public enum Scope: Sendable, Hashable {
            case all
            case zoneIDs([RecordZone.ID])
            case allExcluding([RecordZone.ID])

            public func contains(_ zoneID: RecordZone.ID) -> Bool {
                switch self {
                case .all: true
                case .zoneIDs(let ids): ids.contains(zoneID)
                case .allExcluding(let ids): !ids.contains(zoneID)
                }
            }
        }

        public var scope: Scope
        /// Zones to fetch before the others (zones without changes are ignored).
        public var prioritizedZoneIDs: [RecordZone.ID]

        public init(scope: Scope = .all, prioritizedZoneIDs: [RecordZone.ID] = []) {
            self.scope = scope
            self.prioritizedZoneIDs = prioritizedZoneIDs
        }
    }

    /// What to send. Mirrors `CKSyncEngine.SendChangesOptions`.
    public struct SendChangesOptions: Sendable, Hashable {
        public enum Scope: Sendable, Hashable {
            case all
            case zoneIDs([RecordZone.ID])
            case allExcluding([RecordZone.ID])
            case recordIDs([Record.ID])

            public func contains(_ recordID: Record.ID) -> Bool {
                switch self {
                case .all: true
                case .zoneIDs(let ids): ids.contains(recordID.zoneID)
                case .allExcluding(let ids): !ids.contains(recordID.zoneID)
                case .recordIDs(let ids): ids.contains(recordID)
                }
            }

            public func contains(_ zoneID: RecordZone.ID) -> Bool {
                switch self {
                case .all: true
                case .zoneIDs(let ids): ids.contains(zoneID)
                case .allExcluding(let ids): !ids.contains(zoneID)
                case .recordIDs(let ids): ids.contains { $0.zoneID == zoneID }
                }
            }

            public func contains(_ change: PendingRecordZoneChange) -> Bool {
                contains(change.recordID)
            }

            public func contains(_ change: PendingDatabaseChange) -> Bool {
                contains(change.zoneID)
            }
        }

        public var scope: Scope

        public init(scope: Scope = .all) {
            self.scope = scope
        }
    }

    /// The reason and options of a fetch, handed to the delegate.
    public struct FetchChangesContext: Sendable {
        public let reason: SyncReason
        public let options: FetchChangesOptions
    }

    /// The reason and options of a send, handed to the delegate.
    public struct SendChangesContext: Sendable {
        public let reason: SyncReason
        public let options: SendChangesOptions
    }
}
