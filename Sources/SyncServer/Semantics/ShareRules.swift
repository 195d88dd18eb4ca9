import Foundation
import SyncCore

/// What saving, accepting and leaving a share do, whatever the store.
public enum ShareRules {
    /// Someone a share save invites: their account, already looked up, what they may do, and the
    /// shared key sent for them (nil: keep the stored one).
    typealias Invitee = (
        account: AccountInfo, permission: ShareParticipant.Permission, sharedKey: RecordZone.EncryptionKey?
    )

    /// A new share URL's secret: 128 random bits, URL-safe base64 without padding.
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Whether `token` could be one of ours: anything else is not looked up.
    static func isWellFormed(token: String) -> Bool {
        token.utf8.count == 22
            && token.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F
            }
    }

    /// The share after its owner saved it: the owner first; the people invited, each keeping the
    /// acceptance, own key slot and shared key they had (someone invited again after leaving is
    /// pending again, with neither); people no longer invited are gone, public users stay while the
    /// share is public. A shared key sent for an invitee replaces the one they had.
    ///
    /// - Parameters:
    ///   - place: the zone, the share's record name and, for a record-hierarchy share, its root.
    ///   - invitees: the accounts invited, already looked up, in the request's order, each with the
    ///     shared key sent for them (nil: keep the stored one).
    static func saved(
        existing: StoredShare?, owner: AccountInfo, place: SharePlace, publicPermission: ShareParticipant.Permission,
        invitees: [Invitee], invitationKey: RecordZone.EncryptionKey?
    ) -> StoredShare {
        var participants = [
            StoredParticipant(
                userRecordName: owner.userRecordName, username: owner.username, role: .owner, permission: .readWrite,
                status: .accepted)
        ]
        for (account, permission, sharedKey) in invitees {
            var participant = StoredParticipant(
                userRecordName: account.userRecordName, username: account.username, role: .privateUser,
                permission: permission, status: .pending)
            if let kept = existing?.participant(account.userRecordName), kept.status != .removed {
                participant.status = kept.status
                participant.encryptionKey = kept.encryptionKey
                participant.sharedKey = kept.sharedKey
            }
            participant.sharedKey = sharedKey ?? participant.sharedKey
            participants.append(participant)
        }
        if publicPermission != .none {
            let listed = Set(participants.map(\.userRecordName))
            for var joined in existing?.participants ?? []
            where joined.role == .publicUser && joined.status == .accepted && !listed.contains(joined.userRecordName) {
                joined.permission = publicPermission
                participants.append(joined)
            }
        }
        return StoredShare(
            owner: owner.userRecordName, zoneName: place.zoneName, recordName: place.recordName,
            rootRecordName: existing?.rootRecordName ?? place.rootRecordName, token: existing?.token ?? newToken(),
            publicPermission: publicPermission, invitationKey: invitationKey ?? existing?.invitationKey,
            participants: participants)
    }

    /// Checks a share save against the zone's shares, before anything is written: a zone is shared
    /// whole or record by record, never both (`alreadyShared`); a new record-hierarchy share needs
    /// its root, which must not be another share's root; a share's root never changes.
    ///
    /// - Parameters:
    ///   - existing: the share saved, as stored (nil for a new one).
    ///   - zoneShares: every share of the zone.
    ///   - root: the root record sent with the save, and its stored row.
    ///   - atName: the stored row at the share's record name, if any.
    static func checkSave(
        _ place: SharePlace, existing: StoredShare?, zoneShares: [StoredShare], root: RecordValue?,
        storedRoot: StoredRecord?, atName: StoredRecord?
    ) throws {
        if place.isZoneWide {
            if let other = zoneShares.first(where: { !SharePlace($0).isZoneWide }) {
                throw SyncError(
                    .alreadyShared,
                    "zone '\(place.zoneName)' has shares of records (the share of '\(other.rootRecordName ?? "")', and maybe more); a zone is shared whole or record by record: delete those shares first"
                )
            }
            return
        }
        if zoneShares.contains(where: { SharePlace($0).isZoneWide }) {
            throw SyncError(
                .alreadyShared,
                "zone '\(place.zoneName)' is shared whole already, which shares every record in it; share records of another zone, or stop sharing the zone first"
            )
        }
        if let existing {
            if let root, root.recordID.recordName != existing.rootRecordName {
                throw SyncError(
                    .invalidArguments,
                    "rootRecord: share '\(place.recordName)' has root '\(existing.rootRecordName ?? "")', not '\(root.recordID.recordName)'; a share's root does not change"
                )
            }
            return
        }
        guard let root else {
            throw SyncError(
                .invalidArguments,
                "rootRecord is missing: a new share of records needs its root record, saved with it (or leave out shareRecordName to share the whole zone)"
            )
        }
        if let stored = storedRoot, !stored.isDeleted, let other = stored.shareName {
            throw SyncError(
                .alreadyShared,
                "record '\(root.recordID.recordName)' is the root of share '\(other)' already; change that share instead"
            )
        }
        if place.recordName == root.recordID.recordName || atName.map({ !$0.isDeleted }) == true {
            throw SyncError(
                .invalidArguments,
                "shareRecordName: record '\(place.recordName)' exists in zone '\(place.zoneName)'; give the share a name no record has, or leave shareRecordName out"
            )
        }
    }

    /// The share after `user` accepted it: an invited participant becomes accepted; anyone else
    /// joins as a public user when the share is public. Throws `unknownItem` for anyone else (a
    /// stranger learns nothing, not even that the share exists).
    static func accepted(_ share: StoredShare, by user: AccountInfo, key: RecordZone.EncryptionKey?) throws
        -> StoredShare
    {
        var share = share
        if let index = share.participants.firstIndex(where: { $0.userRecordName == user.userRecordName }) {
            let participant = share.participants[index]
            guard participant.role != .owner else {
                throw SyncError(.invalidArguments, "you own this share; only people you share it with accept it")
            }
            if participant.status == .removed && share.publicPermission == .none {
                throw notOpen
            }
            share.participants[index].status = .accepted
            if participant.role == .publicUser { share.participants[index].permission = share.publicPermission }
            share.participants[index].encryptionKey = key ?? participant.encryptionKey
            return share
        }
        guard share.publicPermission != .none else { throw notOpen }
        guard share.participants.count < Share.maximumParticipants else {
            throw SyncError(
                .tooManyParticipants,
                "this share has \(Share.maximumParticipants) participants, the most a share holds; ask its owner to remove someone"
            )
        }
        share.participants.append(
            StoredParticipant(
                userRecordName: user.userRecordName, username: user.username, role: .publicUser,
                permission: share.publicPermission, status: .accepted, encryptionKey: key))
        return share
    }

    /// The share after `user` left it. Throws `unknownItem` when they were not in it.
    static func left(_ share: StoredShare, by user: String) throws -> StoredShare {
        var share = share
        guard let index = share.participants.firstIndex(where: { $0.userRecordName == user && $0.role != .owner })
        else { throw notOpen }
        share.participants[index].status = .removed
        share.participants[index].encryptionKey = nil
        share.participants[index].sharedKey = nil
        return share
    }

    /// The share after an invited participant declined it: removed, as if they had left. Throws
    /// `unknownItem` for anyone not invited (or who declined or left already), `invalidArguments` for
    /// the owner and for someone who accepted (they leave instead).
    static func declined(_ share: StoredShare, by user: String) throws -> StoredShare {
        guard let participant = share.participant(user), participant.status != .removed else { throw notOpen }
        guard participant.role != .owner else {
            throw SyncError(.invalidArguments, "you own this share; stop sharing it instead of declining it")
        }
        guard participant.status == .pending else {
            throw SyncError(
                .invalidArguments,
                "you accepted this share already; leave it instead (delete its zone from your shared database)")
        }
        return try left(share, by: user)
    }

    /// The answer for a share someone may not open: the same as for one that does not exist.
    static let notOpen = SyncError(
        .unknownItem, "there is no share with this URL open to you; ask its owner for a new invitation")

    /// Whether a save or delete names a share record, which only the share routes write. (A
    /// record-hierarchy share's record is known by its stored type: the planner refuses it.)
    static func isShare(recordName: String, recordType: String? = nil) -> Bool {
        recordName == Share.zoneWideRecordName || recordType == Share.recordType
    }

    /// The share as clients see it; `zoneID` names the zone as the reader knows it.
    static func wire(_ share: StoredShare, zoneID: RecordZone.ID) -> Share {
        Share(
            zoneID: zoneID, recordName: share.recordName, rootRecordName: share.rootRecordName, token: share.token,
            publicPermission: share.publicPermission, participants: share.participants.map(wire),
            invitationKey: share.invitationKey)
    }

    /// A new record-hierarchy share's record name, when its request gives none.
    static func newShareRecordName() -> String {
        "share-\(UUID().uuidString)"
    }

    static func wire(_ participant: StoredParticipant) -> ShareParticipant {
        ShareParticipant(
            userRecordName: participant.userRecordName, username: participant.username, role: participant.role,
            permission: participant.permission, acceptanceStatus: participant.status,
            sharedKeyVersion: participant.sharedKey?.keyVersion)
    }

    /// The share's record in its zone: a `cloudkit.share` (named `cloudkit.zoneshare` for a zone-wide
    /// share), whose fields say what the share is (the participants as JSON strings, owner first, and
    /// a hierarchy's root).
    static func recordFields(_ share: StoredShare) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let participants = share.participants.map { participant in
            // The record says who is in the share, not which key versions they hold: a new shared
            // key does not change the share's record.
            var entry = wire(participant)
            entry.sharedKeyVersion = nil
            // Encoding a struct of strings cannot fail.
            return FieldValue.string(String(decoding: (try? encoder.encode(entry)) ?? Data(), as: UTF8.self))
        }
        var fields: [String: FieldValue] = [
            "publicPermission": .string(share.publicPermission.rawValue),
            "participants": .list(participants),
        ]
        if let root = share.rootRecordName { fields["rootRecordName"] = .string(root) }
        return FieldCoding.encode(fields)
    }

    /// The row that writes the share's record (or its tombstone, when `share` is nil) at `seq`. A
    /// hierarchy's share record is in its hierarchy, so that participants see it.
    static func record(
        of share: StoredShare?, at place: SharePlace, previous: StoredRecord?, actor: String, seq: Int64, now: Int64
    ) -> StoredRecord {
        let live = previous.flatMap { $0.isDeleted ? nil : $0 }
        return StoredRecord(
            key: RecordKey(zoneName: place.zoneName, recordName: place.recordName), recordType: Share.recordType,
            fields: share.map(recordFields) ?? Data(), changeTag: RecordModificationPlanner.changeTag(seq),
            createdAt: live?.createdAt ?? now, creator: live?.creator ?? actor, modifiedAt: now, modifier: actor,
            seq: seq, isDeleted: share == nil, shareRoot: place.rootRecordName)
    }
}

/// Where a share is: its zone, its record's name and, for a record-hierarchy share, its root.
struct SharePlace: Sendable, Hashable {
    var zoneName: String
    var recordName: String
    var rootRecordName: String?

    init(zoneName: String, recordName: String = Share.zoneWideRecordName, rootRecordName: String? = nil) {
        self.zoneName = zoneName
        self.recordName = recordName
        self.rootRecordName = rootRecordName
    }

    init(_ share: StoredShare) {
        self.init(zoneName: share.zoneName, recordName: share.recordName, rootRecordName: share.rootRecordName)
    }

    /// Where a share saved at `recordName` stands: its root stays the one it has (`existing`), else the
    /// root saved with it; a zone-wide share has none.
    init(saving recordName: String, in zoneName: String, existing: StoredShare?, root: ShareRoot?) {
        self.init(
            zoneName: zoneName, recordName: recordName,
            rootRecordName: existing?.rootRecordName ?? root?.record.recordID.recordName)
        if isZoneWide { rootRecordName = nil }
    }

    var isZoneWide: Bool { recordName == Share.zoneWideRecordName }
}
