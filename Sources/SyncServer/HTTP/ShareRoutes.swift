import Foundation
import Hummingbird
import SyncCore

/// The routes under `/v1/shares` and `/v1/users`: an owner shares a zone of their private database,
/// or a record of it and the records below it, with other accounts; the people invited open the
/// share's URL, read what it is and accept it, which puts the zone (or those records of it) in their
/// shared database.
struct ShareRoutes {
    let store: any RecordStore
    let pushHub: PushHub
    let body: BodyCoding
    let limits: ServerLimits

    private var audience: ZoneAudience { ZoneAudience(store: store, pushHub: pushHub) }

    /// `POST /v1/users/lookup`: accounts by name, to invite them.
    func lookupUsers(_ request: Request, context: SyncRequestContext) async throws -> Response {
        _ = try context.requireUser()
        let lookup = try await body.decode(LookupUsersRequest.self, from: request)
        guard lookup.usernames.count <= Share.maximumParticipants else {
            throw SyncError(
                .invalidArguments,
                "usernames: look up at most \(Share.maximumParticipants) names at once (a share's most participants); this request has \(lookup.usernames.count)"
            )
        }
        var response = LookupUsersResponse(users: [], failures: [])
        for username in lookup.usernames {
            if username.isEmpty || username.utf8.count > 255 {
                response.failures.append(
                    .init(username: username, error: SyncError(.invalidArguments, "an account name is 1 to 255 bytes")))
            } else if let account = try await store.account(username: username) {
                response.users.append(
                    AccountInfo(
                        userRecordName: account.userRecordName, username: account.username,
                        publicKey: try await store.publicKey(owner: account.userRecordName)))
            } else {
                response.failures.append(
                    .init(
                        username: username,
                        error: SyncError(.unknownItem, "there is no account named '\(username)'; check the spelling")))
            }
        }
        return try body.response(response)
    }

    /// `POST /v1/shares/save`: shares a zone of the caller's, or one of its records and those below
    /// it, or changes who a share is shared with.
    func save(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let device = try DatabaseRoutes.deviceID(request)
        let save = try await body.decode(SaveShareRequest.self, from: request)
        try RequestValidation.validate(save.zoneID, owner: user, context: "zoneID")
        let recordName = try Self.shareRecordName(of: save, owner: user)
        guard save.participants.count < Share.maximumParticipants else {
            throw SyncError(
                .tooManyParticipants,
                "a share holds at most \(Share.maximumParticipants) participants, its owner included; this one would have \(save.participants.count + 1)"
            )
        }
        let owner = try await identity(of: user)
        var invitees: [ShareRules.Invitee] = []
        var seen: Set<String> = [user]
        for (index, invitee) in save.participants.enumerated() {
            guard invitee.permission != .none else {
                throw SyncError(
                    .invalidArguments,
                    "participants[\(index)]: permission 'none' invites nobody; give readOnly or readWrite, or leave them out"
                )
            }
            guard (1...NameRules.maximumNameBytes).contains(invitee.userRecordName.utf8.count) else {
                throw SyncError(
                    .invalidArguments,
                    "participants[\(index)].userRecordName must be 1 to \(NameRules.maximumNameBytes) bytes; look people up with POST /v1/users/lookup"
                )
            }
            guard seen.insert(invitee.userRecordName).inserted else {
                throw SyncError(
                    .invalidArguments,
                    invitee.userRecordName == user
                        ? "participants[\(index)]: you own the share; list only the people you share it with"
                        : "participants[\(index)]: '\(invitee.userRecordName)' appears twice; list each person once")
            }
            guard let account = try await store.account(userRecordName: invitee.userRecordName)
            else {
                throw SyncError(
                    .unknownItem,
                    "participants[\(index)]: there is no user '\(invitee.userRecordName)'; look people up by account name with POST /v1/users/lookup"
                )
            }
            invitees.append(
                (
                    AccountInfo(userRecordName: account.userRecordName, username: account.username),
                    invitee.permission, invitee.encryptionKey
                ))
        }
        let zoneName = save.zoneID.zoneName
        let before = try await store.share(owner: user, zoneName: zoneName, recordName: recordName)
        let place = SharePlace(
            zoneName: zoneName, recordName: recordName, rootRecordName: save.rootRecord?.recordID.recordName)
        let share = try await store.saveShare(
            owner: user, zoneName: zoneName, recordName: recordName,
            root: save.rootRecord.map { ShareRoot(record: $0, limits: limits) }, now: Date()
        ) { [invitees] existing in
            ShareRules.saved(
                existing: existing, owner: owner, place: place, publicPermission: save.publicPermission,
                invitees: invitees, invitationKey: save.invitationKey)
        }
        await audience.notify(owner: user, zoneNames: [zoneName], by: user, device: device)
        // Those who lost the zone no longer hear of it through its audience.
        for lost in Self.accepted(before).subtracting(Self.accepted(share)).sorted() {
            await pushHub.notify(user: lost, scope: .shared, excludingDevice: nil)
        }
        return try body.response(ShareRules.wire(share, zoneID: save.zoneID))
    }

    /// `POST /v1/shares/fetch`: a share of a zone of the caller's.
    func fetch(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let fetch = try await body.decode(ShareZoneRequest.self, from: request)
        try RequestValidation.validate(fetch.zoneID, owner: user, context: "zoneID")
        let recordName = try Self.shareRecordName(fetch.shareRecordName)
        guard let share = try await store.share(owner: user, zoneName: fetch.zoneID.zoneName, recordName: recordName)
        else {
            throw SyncError(
                .unknownItem,
                fetch.shareRecordName == nil
                    ? "zone '\(fetch.zoneID.zoneName)' is not shared whole"
                    : "zone '\(fetch.zoneID.zoneName)' has no share '\(recordName)'")
        }
        return try body.response(ShareRules.wire(share, zoneID: fetch.zoneID))
    }

    /// `POST /v1/shares/delete`: stops sharing a zone of the caller's; it leaves every participant's
    /// shared database.
    func delete(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let device = try DatabaseRoutes.deviceID(request)
        let delete = try await body.decode(ShareZoneRequest.self, from: request)
        try RequestValidation.validate(delete.zoneID, owner: user, context: "zoneID")
        let recordName = try Self.shareRecordName(delete.shareRecordName)
        // Deleting the share of a zone that is not shared succeeds, as deleting a missing record does.
        guard
            let deleted = try await store.deleteShare(
                owner: user, zoneName: delete.zoneID.zoneName, recordName: recordName, now: Date())
        else { return try body.response(EmptyResponse()) }
        let lost = Self.accepted(deleted)
        await pushHub.notify(user: user, scope: .private, excludingDevice: device)
        for participant in lost.sorted() {
            await pushHub.notify(user: participant, scope: .shared, excludingDevice: nil)
        }
        return try body.response(EmptyResponse())
    }

    /// `POST /v1/shares/metadata`: what a share's URL opens, for someone it is open to.
    func metadata(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let lookup = try await body.decode(ShareTokenRequest.self, from: request)
        guard ShareRules.isWellFormed(token: lookup.token), let share = try await store.share(token: lookup.token)
        else { throw ShareRules.notOpen }
        return try body.response(try await metadata(of: share, for: user))
    }

    /// `POST /v1/shares/accept`: joins a share; its zone appears in the caller's shared database.
    func accept(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let device = try DatabaseRoutes.deviceID(request)
        let accept = try await body.decode(ShareTokenRequest.self, from: request)
        guard ShareRules.isWellFormed(token: accept.token) else { throw ShareRules.notOpen }
        let identity = try await identity(of: user)
        let share = try await store.updateShare(token: accept.token, actor: user, now: Date()) {
            try ShareRules.accepted($0, by: identity, key: accept.encryptionKey)
        }
        await audience.notify(owner: share.owner, zoneNames: [share.zoneName], by: user, device: device)
        return try body.response(try await metadata(of: share, for: user))
    }

    /// `POST /v1/shares/decline`: an invited participant turns the invitation down; it cannot be
    /// accepted afterwards (the owner invites them again to undo it).
    func decline(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let device = try DatabaseRoutes.deviceID(request)
        let decline = try await body.decode(ShareTokenRequest.self, from: request)
        guard ShareRules.isWellFormed(token: decline.token) else { throw ShareRules.notOpen }
        let share = try await store.updateShare(token: decline.token, actor: user, now: Date()) {
            try ShareRules.declined($0, by: user)
        }
        await audience.notify(owner: share.owner, zoneNames: [share.zoneName], by: user, device: device)
        return try body.response(EmptyResponse())
    }

    /// `GET /v1/shares/invitations`: the shares the caller is invited to and has not answered.
    func invitations(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        var invitations: [ShareMetadata] = []
        for share in try await store.memberships(user: user) {
            guard let participant = share.participant(user), participant.role == .privateUser,
                participant.status == .pending
            else { continue }
            invitations.append(try await metadata(of: share, for: user))
        }
        return try body.response(InvitationsResponse(invitations: invitations))
    }

    /// The record name of the share a save names: the zone-wide share's, a hierarchy's given name,
    /// or a new one for a new hierarchy. Checks the root sent with it.
    private static func shareRecordName(of save: SaveShareRequest, owner: String) throws -> String {
        if let root = save.rootRecord {
            try RequestValidation.validate(record: root, owner: owner, context: "rootRecord")
            guard root.recordID.zoneID.zoneName == save.zoneID.zoneName else {
                throw SyncError(
                    .invalidArguments,
                    "rootRecord: the root is in zone '\(root.recordID.zoneID.zoneName)', not in the share's zone '\(save.zoneID.zoneName)'"
                )
            }
            guard root.recordType != Share.recordType else {
                throw SyncError(.invalidArguments, "rootRecord: a share cannot be the root of another share")
            }
        }
        guard save.isHierarchy else { return Share.zoneWideRecordName }
        return try save.shareRecordName.map { try shareRecordName($0) } ?? ShareRules.newShareRecordName()
    }

    /// The record name a request gives a share: the zone-wide share's when it gives none.
    private static func shareRecordName(_ name: String?) throws -> String {
        guard let name else { return Share.zoneWideRecordName }
        if let problem = NameRules.problem(withName: name, kind: "shareRecordName") {
            throw SyncError(.invalidArguments, problem)
        }
        guard name != Share.zoneWideRecordName else {
            throw SyncError(
                .invalidArguments,
                "shareRecordName '\(name)' names the zone-wide share; leave shareRecordName out to mean it")
        }
        return name
    }

    private func metadata(of share: StoredShare, for user: String) async throws -> ShareMetadata {
        let participant = share.participant(user)
        let role: ShareParticipant.Role
        let permission: ShareParticipant.Permission
        let status: ShareParticipant.AcceptanceStatus
        if let participant, participant.status != .removed || share.publicPermission != .none {
            role = participant.role
            permission = participant.role == .publicUser ? share.publicPermission : participant.permission
            status = participant.status == .removed ? .pending : participant.status
        } else if participant == nil, share.publicPermission != .none {
            (role, permission, status) = (.publicUser, share.publicPermission, .pending)
        } else {
            throw ShareRules.notOpen
        }
        guard let owner = share.participants.first(where: { $0.role == .owner }) else { throw ShareRules.notOpen }
        return ShareMetadata(
            share: ShareRules.wire(share, zoneID: RecordZone.ID(zoneName: share.zoneName, ownerName: share.owner)),
            ownerIdentity: AccountInfo(
                userRecordName: owner.userRecordName, username: owner.username,
                publicKey: try await store.publicKey(owner: owner.userRecordName)),
            participantRole: role, participantPermission: permission, participantStatus: status)
    }

    /// The signed-in user's identity.
    private func identity(of user: String) async throws -> AccountInfo {
        guard let account = try await store.account(userRecordName: user) else {
            throw SyncError.accountGone
        }
        return AccountInfo(userRecordName: account.userRecordName, username: account.username)
    }

    private static func accepted(_ share: StoredShare?) -> Set<String> {
        Set(
            (share?.participants ?? []).filter { $0.role != .owner && $0.status == .accepted }.map(\.userRecordName))
    }
}

private struct EmptyResponse: Encodable {}
