import Foundation
import SyncCore

/// What a keyring sealed last for each field of the records it sealed most recently, so that a value
/// coming back exactly as it was sealed here (the answer to an upload, or the fetch after it) is taken
/// as it was rather than opened: a large upload does not decrypt everything it just encrypted.
///
/// Taking a remembered value is as safe as opening: the ciphertext must be byte for byte the one sealed
/// here for that field of that record, so the plaintext is the one this device sealed into it, which
/// opening would give too. Bounded: the oldest records are forgotten first, and then open as usual.
struct RecentlySealed {
    struct Field {
        var sealed: Data
        var plain: FieldValue
    }

    /// At 14 fields a record, about 20 MB at most.
    static let recordLimit = 10_000

    private(set) var fields: [RecordValue.ID: [String: Field]] = [:]
    /// Records in the order they were sealed, oldest first from `oldest`.
    private var order: [RecordValue.ID] = []
    private var oldest = 0

    mutating func remember(_ sealed: [String: Field], for recordID: RecordValue.ID) {
        if fields.updateValue(sealed, forKey: recordID) == nil { order.append(recordID) }
        while fields.count > Self.recordLimit, oldest < order.count {
            fields[order[oldest]] = nil
            oldest += 1
        }
        // Compact the order once its forgotten head outgrows what is held.
        if oldest > Self.recordLimit {
            order.removeFirst(oldest)
            oldest = 0
        }
    }

    mutating func forget(zoneIDs: Set<RecordZone.ID>) {
        guard !zoneIDs.isEmpty else { return }
        fields = fields.filter { !zoneIDs.contains($0.key.zoneID) }
        order = order[oldest...].filter { fields[$0] != nil }
        oldest = 0
    }
}
