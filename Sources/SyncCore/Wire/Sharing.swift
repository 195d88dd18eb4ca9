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

    public init(
        userRecordName: String, username: String, role: Role, permission: Permission,
        acceptanceStatus: AcceptanceStatus
    ) {
        self.userRecordName = userRecordName
        self.username = username
        self.role = role
        self.permission = permission
        self.acceptanceStatus = acceptanceStatus
    }
}

/// A zone-wide share: who may see and change a zone of its owner. Mirrors `CKShare` with
/// `CKRecordZone.ID`-based (zone-wide) sharing; the server also keeps it as a record of type
/// ``recordType`` named ``zoneWideRecordName`` in the zone, as CloudKit does.
public struct Share: Codable, Sendable, Hashable {
    /// The record type of shares (`CKRecord.SystemType.share`).
    public static let recordType = "cloudkit.share"
    /// The record name of a zone-wide share (`CKRecordNameZoneWideShare`).
    public static let zoneWideRecordName = "cloudkit.zoneshare"
    /// The most participants a share holds, the owner included (CloudKit's limit).
    public static let maximumParticipants = 100

    /// The shared zone, named with its owner's user record name.
    public var zoneID: RecordZone.ID
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
        zoneID: RecordZone.ID, token: String, publicPermission: ShareParticipant.Permission,
        participants: [ShareParticipant], invitationKey: RecordZone.EncryptionKey?
    ) {
        self.zoneID = zoneID
        self.token = token
        self.publicPermission = publicPermission
        self.participants = participants
        self.invitationKey = invitationKey
    }

    /// The owner's entry.
    public var owner: ShareParticipant? { participants.first { $0.role == .owner } }
}

/// `POST /v1/shares/save`: shares one of the caller's zones, or changes its share.
///
/// Participants left out of a changed share are removed; those kept keep their acceptance.
public struct SaveShareRequest: Codable, Sendable, Hashable {
    /// Someone to invite, and what they may do.
    public struct Invitee: Codable, Sendable, Hashable {
        public var userRecordName: String
        public var permission: ShareParticipant.Permission

        public init(userRecordName: String, permission: ShareParticipant.Permission) {
            self.userRecordName = userRecordName
            self.permission = permission
        }
    }

    public var zoneID: RecordZone.ID
    public var publicPermission: ShareParticipant.Permission
    public var participants: [Invitee]
    public var invitationKey: RecordZone.EncryptionKey?

    public init(
        zoneID: RecordZone.ID, publicPermission: ShareParticipant.Permission = .none, participants: [Invitee],
        invitationKey: RecordZone.EncryptionKey? = nil
    ) {
        self.zoneID = zoneID
        self.publicPermission = publicPermission
        self.participants = participants
        self.invitationKey = invitationKey
    }

    private enum CodingKeys: String, CodingKey {
        case zoneID, publicPermission, participants, invitationKey
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        zoneID = try container.decode(RecordZone.ID.self, forKey: .zoneID)
        publicPermission =
            try container.decodeIfPresentNotNull(ShareParticipant.Permission.self, forKey: .publicPermission) ?? .none
        participants = try container.decode([Invitee].self, forKey: .participants)
        invitationKey = try container.decodeIfPresentNotNull(RecordZone.EncryptionKey.self, forKey: .invitationKey)
    }
}

/// `POST /v1/shares/fetch` and `POST /v1/shares/delete`: the share of one of the caller's zones.
public struct ShareZoneRequest: Codable, Sendable, Hashable {
    public var zoneID: RecordZone.ID

    public init(zoneID: RecordZone.ID) {
        self.zoneID = zoneID
    }
}

/// `POST /v1/shares/metadata` and `POST /v1/shares/accept`: a share, named by its URL's token.
public struct ShareTokenRequest: Codable, Sendable, Hashable {
    public var token: String
    /// For `accept`: the zone's key wrapped by the participant's own account key, which the server
    /// hands back with the zone in the participant's shared database.
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
