import SyncClient
import SyncCore

extension SyncEngine {
    /// Everything the engine tells its delegate, one at a time and in order. Mirrors `CKSyncEngine.Event`.
    public enum Event: Sendable, CustomStringConvertible {
        /// The state changed: persist ``StateUpdate/stateSerialization`` together with the data it belongs to.
        case stateUpdate(StateUpdate)
        /// The signed-in account appeared, went away or changed.
        case accountChange(AccountChange)
        /// Zones changed or were deleted on the server.
        case fetchedDatabaseChanges(FetchedDatabaseChanges)
        /// Records changed or were deleted on the server.
        case fetchedRecordZoneChanges(FetchedRecordZoneChanges)
        /// The result of sending one batch of zone changes.
        case sentDatabaseChanges(SentDatabaseChanges)
        /// The result of sending one batch of record changes.
        case sentRecordZoneChanges(SentRecordZoneChanges)
        case willFetchChanges(WillFetchChanges)
        case willFetchRecordZoneChanges(WillFetchRecordZoneChanges)
        case didFetchRecordZoneChanges(DidFetchRecordZoneChanges)
        case didFetchChanges(DidFetchChanges)
        case willSendChanges(WillSendChanges)
        case didSendChanges(DidSendChanges)

        public var description: String {
            switch self {
            case .stateUpdate: "stateUpdate"
            case .accountChange(let change): "accountChange(\(change.changeType))"
            case .fetchedDatabaseChanges(let event):
                "fetchedDatabaseChanges(\(event.modifications.count) modified, \(event.deletions.count) deleted)"
            case .fetchedRecordZoneChanges(let event):
                "fetchedRecordZoneChanges(\(event.modifications.count) modified, \(event.deletions.count) deleted"
                    + (event.failedRecordFetches.isEmpty ? ")" : ", \(event.failedRecordFetches.count) refused)")
            case .sentDatabaseChanges(let event):
                "sentDatabaseChanges(\(event.savedZones.count) saved, \(event.deletedZoneIDs.count) deleted, \(event.failedZoneSaves.count + event.failedZoneDeletes.count) failed)"
            case .sentRecordZoneChanges(let event):
                "sentRecordZoneChanges(\(event.savedRecords.count) saved, \(event.deletedRecordIDs.count) deleted, \(event.failedRecordSaves.count + event.failedRecordDeletes.count) failed)"
            case .willFetchChanges: "willFetchChanges"
            case .willFetchRecordZoneChanges(let event): "willFetchRecordZoneChanges(\(event.zoneID))"
            case .didFetchRecordZoneChanges(let event):
                "didFetchRecordZoneChanges(\(event.zoneID)\(event.error.map { ", \($0.code)" } ?? ""))"
            case .didFetchChanges: "didFetchChanges"
            case .willSendChanges: "willSendChanges"
            case .didSendChanges: "didSendChanges"
            }
        }

        public struct StateUpdate: Sendable {
            public let stateSerialization: State.Serialization
        }

        public struct AccountChange: Sendable {
            public enum ChangeType: Sendable, Hashable {
                case signIn(currentUser: Record.ID)
                case signOut(previousUser: Record.ID)
                case switchAccounts(previousUser: Record.ID, currentUser: Record.ID)
            }

            public let changeType: ChangeType
        }

        public struct FetchedDatabaseChanges: Sendable {
            public struct Modification: Sendable, Hashable {
                public let zoneID: RecordZone.ID
            }

            public struct Deletion: Sendable, Hashable {
                public let zoneID: RecordZone.ID
                public let reason: ZoneDeletionReason
            }

            public let modifications: [Modification]
            public let deletions: [Deletion]
        }

        public struct FetchedRecordZoneChanges: Sendable {
            public struct Modification: Sendable {
                public let record: Record
            }

            public struct Deletion: Sendable, Hashable {
                public let recordID: Record.ID
                public let recordType: String
            }

            /// A record that arrived but is not handed over as data: its sealed values do not open, or it is of
            /// a sealed type (``SealedRecordTypes``) and fails the checks (a plain value where a sealed one
            /// belongs, a version below one the app has seen). The error is `recordTampered`, its
            /// ``SyncError/reason`` the check that failed (`plainField`, `doesNotOpen`, `rollback`). Keep
            /// what arrived for inspection if you like; never merge it, and keep your own copy as it is.
            public struct FailedRecordFetch: Sendable {
                /// The record as it arrived from the server, sealed values unopened: not data to use.
                public let record: RecordValue
                /// Why it was refused.
                public let error: SyncError

                /// The refused record's ID.
                public var recordID: Record.ID { record.recordID }
                /// The refused record's type.
                public var recordType: String { record.recordType }
            }

            public let modifications: [Modification]
            public let deletions: [Deletion]
            /// Records refused, each with why.
            public let failedRecordFetches: [FailedRecordFetch]
        }

        public struct SentDatabaseChanges: Sendable {
            public struct FailedZoneSave: Sendable {
                public let zone: RecordZone
                public let error: SyncError
            }

            public let savedZones: [RecordZone]
            public let failedZoneSaves: [FailedZoneSave]
            public let deletedZoneIDs: [RecordZone.ID]
            public let failedZoneDeletes: [RecordZone.ID: SyncError]
        }

        public struct SentRecordZoneChanges: Sendable {
            /// A save that failed: the record as sent, and why (with the server's record for conflicts).
            public struct FailedRecordSave: Sendable {
                public let record: Record
                public let error: SyncError
            }

            public let savedRecords: [Record]
            public let failedRecordSaves: [FailedRecordSave]
            public let deletedRecordIDs: [Record.ID]
            public let failedRecordDeletes: [Record.ID: SyncError]
        }

        public struct WillFetchChanges: Sendable {
            public let context: FetchChangesContext
        }

        public struct WillFetchRecordZoneChanges: Sendable {
            public let zoneID: RecordZone.ID
        }

        public struct DidFetchRecordZoneChanges: Sendable {
            public let zoneID: RecordZone.ID
            public let error: SyncError?
        }

        public struct DidFetchChanges: Sendable {
            public let context: FetchChangesContext
        }

        public struct WillSendChanges: Sendable {
            public let context: SendChangesContext
        }

        public struct DidSendChanges: Sendable {
            public let context: SendChangesContext
        }
    }
}
