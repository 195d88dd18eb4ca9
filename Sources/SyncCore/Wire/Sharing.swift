import Foundation

/// Someone a zone is shared with, or its owner. Mirrors `CKShare.Participant`.
public struct ShareParticipant: Codable, Sendable, Hashable {
    /// Mirrors `CKShare.ParticipantRole`.
    public enum Role: String, Codable, Sendable, Hashable {
        case owner, privateUser, publicUser
    }

    /// Mirrors `CKShare.ParticipantPermission`.
    public enum Permission: String, Codable, Sendable, Hashable, Comparable {
        case none, readOnly, readWrite

        private var rank: Int {
            switch self {
            case .none: 0
            case .readOnly: 1
            case .readWrite: 2
            }
        }

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
    }

    /// Mirrors `CKShare.ParticipantAcceptanceStatus`.
    public enum AcceptanceStatus: String, Codable, Sendable, Hashable {
        case pending, accepted, removed
    }

    /// The participant's user record name (their identity).
    public var userRecordName: String
    /// Their account name, for people to read.
    public var username: String
    public var role: Role
    public var permission: Permission
    public var acceptanceStatus: AcceptanceStatus
    /// The newest key version the owner wrapped to this participant's public key (see
    /// ``SaveShareRequest/Invitee/encryptionKey``); absent when the owner has wrapped none. The
    /// owner compares it with the zone's key version to see who is behind.
    public var sharedKeyVersion: Int?

    public init(
        userRecordName: String, username: String, role: Role, permission: Permission,
        acceptanceStatus: AcceptanceStatus, sharedKeyVersion: Int? = nil
    ) {
        self.userRecordName = userRecordName
        self.username = username
        self.role = role
        self.permission = permission
        self.acceptanceStatus = acceptanceStatus
        self.sharedKeyVersion = sharedKeyVersion
    }
}

/// A share: who may see and change a zone of its owner (a zone-wide share), or one record and the
/// records below it (a record-hierarchy share, whose ``rootRecordName`` is set). Mirrors `CKShare`.
/// The server also keeps it as a record of type ``recordType`` in the zone, as CloudKit does: named
/// ``zoneWideRecordName`` for a zone-wide share, and the root record's `share` refers to a hierarchy's.
public struct Share: Codable, Sendable, Hashable {
    /// The record type of shares (`CKRecord.SystemType.share`).
    public static let recordType = "cloudkit.share"
    /// The record name of a zone-wide share (`CKRecordNameZoneWideShare`).
    public static let zoneWideRecordName = "cloudkit.zoneshare"
    /// The most participants a share holds, the owner included (CloudKit's limit).
    public static let maximumParticipants = 100

    /// The shared zone, named with its owner's user record name.
    public var zoneID: RecordZone.ID
    /// The share's record name in the zone: ``zoneWideRecordName`` for a zone-wide share.
    public var recordName: String
    /// For a record-hierarchy share, the root record's name: the share holds it and every record
    /// whose `parent` chain leads to it. Nil for a zone-wide share.
    public var rootRecordName: String?
    /// The secret part of the share's URL: whoever is invited opens the share with it.
    public var token: String
    /// What anyone with the URL may do without being invited (a link share); `none` by default.
    public var publicPermission: ShareParticipant.Permission
    /// The owner first, then the others in the order they were added.
    public var participants: [ShareParticipant]
    /// The zone's key wrapped by the invitation's secret, which travels with the URL and never
    /// reaches the server; `nil` when the zone has no encrypted values.
    public var invitationKey: RecordZone.EncryptionKey?

    public init(
        zoneID: RecordZone.ID, recordName: String = Share.zoneWideRecordName, rootRecordName: String? = nil,
        token: String, publicPermission: ShareParticipant.Permission, participants: [ShareParticipant],
        invitationKey: RecordZone.EncryptionKey?
    ) {
        self.zoneID = zoneID
        self.recordName = recordName
        self.rootRecordName = rootRecordName
        self.token = token
        self.publicPermission = publicPermission
        self.participants = participants
        self.invitationKey = invitationKey
    }

    /// The owner's entry.
    public var owner: ShareParticipant? { participants.first { $0.role == .owner } }

    /// The share's record ID (`CKShare.recordID`).
    public var recordID: RecordValue.ID { RecordValue.ID(recordName: recordName, zoneID: zoneID) }

    /// The root record's ID, for a record-hierarchy share.
    public var rootRecordID: RecordValue.ID? {
        rootRecordName.map { RecordValue.ID(recordName: $0, zoneID: zoneID) }
    }

    private enum CodingKeys: String, CodingKey {
        case zoneID, recordName, rootRecordName, token, publicPermission, participants, invitationKey
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        zoneID = try container.decode(RecordZone.ID.self, forKey: .zoneID)
        // Servers before record-hierarchy shares sent zone-wide shares without a record name.
        recordName = try container.decodeIfPresentNotNull(String.self, forKey: .recordName) ?? Self.zoneWideRecordName
        rootRecordName = try container.decodeIfPresentNotNull(String.self, forKey: .rootRecordName)
        token = try container.decode(String.self, forKey: .token)
        publicPermission = try container.decode(ShareParticipant.Permission.self, forKey: .publicPermission)
        participants = try container.decode([ShareParticipant].self, forKey: .participants)
        invitationKey = try container.decodeIfPresentNotNull(RecordZone.EncryptionKey.self, forKey: .invitationKey)
    }
}

extension Share {
    /// The participants a share's record lists (the server writes one JSON object per participant);
    /// nil for a record that is not a share's.
    public static func participants(in record: RecordValue) -> [ShareParticipant]? {
        guard record.recordType == recordType, case .list(let items)? = record["participants"] else { return nil }
        return items.compactMap { item in
            item.stringValue.flatMap { try? JSONDecoder().decode(ShareParticipant.self, from: Data($0.utf8)) }
        }
    }
}

/// `POST /v1/shares/save`: shares one of the caller's zones, or one record of it and the records
/// below it (with ``rootRecord``), or changes a share.
///
/// Participants left out of a changed share are removed; those kept keep their acceptance.
public struct SaveShareRequest: Codable, Sendable, Hashable {
    /// Someone to invite, and what they may do.
    public struct Invitee: Codable, Sendable, Hashable {
        public var userRecordName: String
        public var permission: ShareParticipant.Permission
        /// The zone's keys wrapped to this person's public key, stored as their shared key
        /// (replacing the one stored before); left out, the stored one stays.
        public var encryptionKey: RecordZone.EncryptionKey?

        public init(
            userRecordName: String, permission: ShareParticipant.Permission,
            encryptionKey: RecordZone.EncryptionKey? = nil
        ) {
            self.userRecordName = userRecordName
            self.permission = permission
            self.encryptionKey = encryptionKey
        }

        private enum CodingKeys: String, CodingKey {
            case userRecordName, permission, encryptionKey
        }

        /// Decodes an invitee; `encryptionKey` may be left out but not sent as `null`.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            userRecordName = try container.decode(String.self, forKey: .userRecordName)
            permission = try container.decode(ShareParticipant.Permission.self, forKey: .permission)
            encryptionKey = try container.decodeIfPresentNotNull(RecordZone.EncryptionKey.self, forKey: .encryptionKey)
        }
    }

    public var zoneID: RecordZone.ID
    public var publicPermission: ShareParticipant.Permission
    public var participants: [Invitee]
    public var invitationKey: RecordZone.EncryptionKey?
    /// A record-hierarchy share's root, saved in the same request as the share (with the usual
    /// save checks: its change tag must be the server's); the root's `share` then refers to the
    /// share. Needed to create a record-hierarchy share; optional when changing one.
    public var rootRecord: RecordValue?
    /// Names a record-hierarchy share: the one to change, or the record name a new one takes (the
    /// server makes one up when it is left out). Nil, without a root, for the zone-wide share.
    public var shareRecordName: String?

    public init(
        zoneID: RecordZone.ID, publicPermission: ShareParticipant.Permission = .none, participants: [Invitee],
        invitationKey: RecordZone.EncryptionKey? = nil, rootRecord: RecordValue? = nil,
        shareRecordName: String? = nil
    ) {
        self.zoneID = zoneID
        self.publicPermission = publicPermission
        self.participants = participants
        self.invitationKey = invitationKey
        self.rootRecord = rootRecord
        self.shareRecordName = shareRecordName
    }

    private enum CodingKeys: String, CodingKey {
        case zoneID, publicPermission, participants, invitationKey, rootRecord, shareRecordName
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        zoneID = try container.decode(RecordZone.ID.self, forKey: .zoneID)
        publicPermission =
            try container.decodeIfPresentNotNull(ShareParticipant.Permission.self, forKey: .publicPermission) ?? .none
        participants = try container.decode([Invitee].self, forKey: .participants)
        invitationKey = try container.decodeIfPresentNotNull(RecordZone.EncryptionKey.self, forKey: .invitationKey)
        rootRecord = try container.decodeIfPresentNotNull(RecordValue.self, forKey: .rootRecord)
        shareRecordName = try container.decodeIfPresentNotNull(String.self, forKey: .shareRecordName)
    }

    /// Whether this saves a record-hierarchy share rather than the zone-wide one.
    public var isHierarchy: Bool { rootRecord != nil || shareRecordName != nil }
}

/// `POST /v1/shares/fetch` and `POST /v1/shares/delete`: the zone-wide share of one of the caller's
/// zones, or with ``shareRecordName`` one of its record-hierarchy shares.
public struct ShareZoneRequest: Codable, Sendable, Hashable {
    public var zoneID: RecordZone.ID
    /// The record name of a record-hierarchy share; nil for the zone-wide share.
    public var shareRecordName: String?

    public init(zoneID: RecordZone.ID, shareRecordName: String? = nil) {
        self.zoneID = zoneID
        self.shareRecordName = shareRecordName
    }

    private enum CodingKeys: String, CodingKey {
        case zoneID, shareRecordName
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        zoneID = try container.decode(RecordZone.ID.self, forKey: .zoneID)
        shareRecordName = try container.decodeIfPresentNotNull(String.self, forKey: .shareRecordName)
    }
}

/// `POST /v1/shares/metadata` and `POST /v1/shares/accept`: a share, named by its URL's token.
public struct ShareTokenRequest: Codable, Sendable, Hashable {
    public var token: String
    /// For `accept`: the zone's key wrapped by the participant's own account key, which the server
    /// hands back with the zone in the participant's shared database. A participant who accepted
    /// already replaces their slot by accepting again with a new one; without one, it stays.
    public var encryptionKey: RecordZone.EncryptionKey?

    public init(token: String, encryptionKey: RecordZone.EncryptionKey? = nil) {
        self.token = token
        self.encryptionKey = encryptionKey
    }

    private enum CodingKeys: String, CodingKey {
        case token, encryptionKey
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        token = try container.decode(String.self, forKey: .token)
        encryptionKey = try container.decodeIfPresentNotNull(RecordZone.EncryptionKey.self, forKey: .encryptionKey)
    }
}

/// What someone opening a share's URL learns before accepting it. Mirrors `CKShare.Metadata`.
public struct ShareMetadata: Codable, Sendable, Hashable {
    public var share: Share
    public var ownerIdentity: AccountInfo
    /// The caller's place in the share.
    public var participantRole: ShareParticipant.Role
    public var participantPermission: ShareParticipant.Permission
    public var participantStatus: ShareParticipant.AcceptanceStatus

    public init(
        share: Share, ownerIdentity: AccountInfo, participantRole: ShareParticipant.Role,
        participantPermission: ShareParticipant.Permission, participantStatus: ShareParticipant.AcceptanceStatus
    ) {
        self.share = share
        self.ownerIdentity = ownerIdentity
        self.participantRole = participantRole
        self.participantPermission = participantPermission
        self.participantStatus = participantStatus
    }

    /// The root record of a record-hierarchy share (`CKShare.Metadata.hierarchicalRootRecordID`);
    /// nil for a zone-wide share.
    public var hierarchicalRootRecordID: RecordValue.ID? { share.rootRecordID }
}

/// `POST /v1/users/lookup`: the identities of accounts, by account name, to invite them.
public struct LookupUsersRequest: Codable, Sendable, Hashable {
    public var usernames: [String]

    public init(usernames: [String]) {
        self.usernames = usernames
    }
}

public struct LookupUsersResponse: Codable, Sendable, Hashable {
    public struct Failure: Codable, Sendable, Hashable {
        public var username: String
        public var error: SyncError

        public init(username: String, error: SyncError) {
            self.username = username
            self.error = error
        }
    }

    public var users: [AccountInfo]
    public var failures: [Failure]

    public init(users: [AccountInfo], failures: [Failure]) {
        self.users = users
        self.failures = failures
    }
}

/// `GET /v1/shares/invitations`: the shares the caller is invited to by name and has neither accepted
/// nor declined, each as its metadata (with its token, to accept or decline it, and its owner's public
/// key, to compare with the owner before accepting), by owner and zone.
public struct InvitationsResponse: Codable, Sendable, Hashable {
    public var invitations: [ShareMetadata]

    public init(invitations: [ShareMetadata]) {
        self.invitations = invitations
    }
}
