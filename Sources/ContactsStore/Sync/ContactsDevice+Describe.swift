import ContactsModel
import SyncCore
import SyncKit
import Synchronization

/// Engine events described for people, for the TUI's event log.
extension ContactsDevice {
    static func describe(_ event: SyncEngine.Event, fetched: borrowing Mutex<Int>) -> String? {
        switch event {
        case .stateUpdate: return nil
        case .accountChange(let change):
            switch change.changeType {
            case .signIn(let user): return "signed in as \(user.recordName)"
            case .signOut: return "signed out"
            case .switchAccounts(_, let user): return "switched account to \(user.recordName)"
            }
        case .fetchedDatabaseChanges(let changes):
            let deleted = changes.deletions.map { "\($0.zoneID.zoneName) (\($0.reason.rawValue))" }
            return deleted.isEmpty ? nil : "zone deleted on the server: " + deleted.joined(separator: ", ")
        case .fetchedRecordZoneChanges(let changes):
            let total = fetched.withLock { $0 }
            return
                "fetched \(changes.modifications.count) changes, \(changes.deletions.count) deletions (\(total) so far)"
        case .sentDatabaseChanges(let sent):
            let saved = sent.savedZones.map(\.zoneID.zoneName)
            let deleted = sent.deletedZoneIDs.map(\.zoneName)
            return "sent zones: saved \(saved), deleted \(deleted)"
        case .sentRecordZoneChanges(let sent):
            var text =
                "sent \(sent.savedRecords.count) saves, \(sent.deletedRecordIDs.count) deletions"
                + shortIDs(sent.savedRecords.map(\.recordID) + sent.deletedRecordIDs)
            if let failure = sent.failedRecordSaves.first {
                text +=
                    "; \(sent.failedRecordSaves.count) failed (\(failure.error.code.rawValue) for \(failure.record.recordID.recordName))"
            }
            return text
        case .willFetchChanges: return "fetching"
        case .didFetchChanges: return "fetch done"
        case .willSendChanges: return "sending"
        case .didSendChanges: return "send done"
        case .willFetchRecordZoneChanges(let zone): return "fetching zone \(zone.zoneID.zoneName)"
        case .didFetchRecordZoneChanges(let zone):
            return zone.error.map { "zone \(zone.zoneID.zoneName) failed: \($0.code.rawValue)" }
        }
    }
}

/// " (Contacts/3B8CE1EC, Contacts/…)": the first few record IDs of an event, for the log.
private func shortIDs(_ ids: [SyncCore.RecordValue.ID]) -> String {
    guard !ids.isEmpty else { return "" }
    let shown = ids.prefix(3).map { "\($0.zoneID.zoneName)/\($0.recordName.prefix(8))" }
    return " (" + shown.joined(separator: ", ") + (ids.count > 3 ? ", …" : "") + ")"
}
