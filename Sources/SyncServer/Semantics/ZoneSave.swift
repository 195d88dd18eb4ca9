import Foundation
import SyncCore

/// What saving a zone does to the zone as stored, the same for every store.
///
/// A zone that does not exist is created with the key sent (if any); one that exists without a key
/// gains the key sent; one that has a key keeps it unless the key sent has a higher `keyVersion`
/// (a device rotated the zone's key: the chain it sends holds every older version too). A key of
/// the same or a lower version stays: a later one is another device's, made before it saw this
/// one, and that device adopts the stored key from the answer.
enum ZoneSave: Equatable {
    case create
    /// The zone gains the key sent, or has it in place of an older version.
    case addKey(RecordZone.EncryptionKey)
    /// Nothing changes; the answer carries the zone as stored.
    case keep(StoredZone)

    static func decide(stored: StoredZone?, save: StoredZone) -> ZoneSave {
        guard let stored else { return .create }
        guard let key = save.encryptionKey else { return .keep(stored) }
        guard let storedKey = stored.encryptionKey else { return .addKey(key) }
        return key.keyVersion > storedKey.keyVersion ? .addKey(key) : .keep(stored)
    }
}

extension StoredZone {
    /// A zone as a store reads it back. A key is taken only when both parts are set and within the
    /// wire's ranges, so that a damaged row cannot trap or leak out.
    init(zoneName: String, keyVersion: Int64?, wrappedKey: Data?) {
        self.init(
            zoneName: zoneName, encryptionKey: RecordZone.EncryptionKey(storedVersion: keyVersion, wrapped: wrappedKey))
    }
}

extension RecordZone.EncryptionKey {
    /// A wrapped key as a store reads it back (a zone's, a share's, a participant's): nil unless both
    /// parts are set and within the wire's ranges, so that a damaged row cannot trap or leak out.
    init?(storedVersion: Int64?, wrapped: Data?) {
        guard let storedVersion, let wrapped, let version = Int(exactly: storedVersion),
            Self.problem(keyVersion: version) == nil, Self.problem(wrappedKey: wrapped) == nil
        else { return nil }
        self.init(keyVersion: version, wrappedKey: wrapped)
    }
}
