import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// Every route, walked as each kind of person a shared zone can meet: what they may read and
/// change of Ada's zones, and nothing more. Ada's Family zone is shared whole, or only its record
/// Alan and the records below it; Outsider, in the same zone, is then seen by nobody but Ada.
@Suite("Sharing: every route, as owner, read-write, read-only, removed and stranger", .onEveryBackend)
struct SharingIsolationTests {
    enum Role: String, CaseIterable {
        case readWrite, readOnly, removed, stranger
    }

    /// The zone, or the hierarchy of its record Alan.
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case zone, hierarchy
        var testDescription: String { self == .zone ? "a zone-wide share" : "a record-hierarchy share" }
    }

    /// What one person got from each route, in words, to compare with what their role allows.
    private func walk(
        _ client: TestClient, family: RecordZone.ID, hidden: RecordZone.ID, token: String, shareRecordName: String,
        photos: [String: String]
    ) async throws
        -> [String: String]
    {
        func outcome(_ body: () async throws -> String) async -> String {
            do { return try await body() } catch let error as SyncError { return error.code.rawValue } catch {
                return "\(error)"
            }
        }
        let alan = RecordValue.ID(recordName: "Alan", zoneID: family)
        var seen: [String: String] = [:]
        seen["zones/list"] = await outcome {
            try await client.listZones(scope: .shared).map(\.zoneID.zoneName).joined(separator: ",")
        }
        seen["zones/changes"] = await outcome {
            try await client.fetchDatabaseChanges(scope: .shared).modifications.map(\.zoneName).joined(separator: ",")
        }
        seen["zones/modify save"] = await outcome {
            try await client.modifyZones(ModifyZonesRequest(saves: [RecordZone(zoneID: family)]), scope: .shared)
                .failedZoneSaves.first?.error.code.rawValue ?? "ok"
        }
        seen["records/changes"] = await outcome {
            try await client.fetchAllZoneChanges(family, scope: .shared).modifications.map(\.recordID.recordName)
                .sorted().joined(separator: ",")
        }
        seen["records/lookup"] = await outcome {
            let answer = try await client.lookupRecords([alan], scope: .shared)
            return answer.failures.first?.error.code.rawValue ?? answer.records.map(\.recordID.recordName).joined()
        }
        seen["records/modify save"] = await outcome {
            var new = contact("New", zone: family)
            new.parent = .init(recordID: alan)
            return try await client.modifyRecords(ModifyRecordsRequest(saves: [new]), scope: .shared)
                .failedRecordSaves.first?.error.code.rawValue ?? "ok"
        }
        let outsider = RecordValue.ID(recordName: "Outsider", zoneID: family)
        seen["outsider records/lookup"] = await outcome {
            let answer = try await client.lookupRecords([outsider], scope: .shared)
            return answer.failures.first?.error.code.rawValue ?? answer.records.map(\.recordID.recordName).joined()
        }
        seen["outsider records/modify save"] = await outcome {
            try await client.modifyRecords(
                ModifyRecordsRequest(saves: [contact("Outsider", zone: family)]), scope: .shared
            ).failedRecordSaves.first?.error.code.rawValue ?? "ok"
        }
        seen["records/modify delete"] = await outcome {
            try await client.modifyRecords(
                ModifyRecordsRequest(deletes: [RecordValue.ID(recordName: "New", zoneID: family)]), scope: .shared
            ).failedRecordDeletes.first?.error.code.rawValue ?? "ok"
        }
        // The photos of Alan and Outsider: downloaded as their records are looked up.
        for name in ["Alan", "Outsider"] {
            let recordID = RecordValue.ID(recordName: name, zoneID: family)
            let answer = try await client.downloadAsset(photos[name]!, of: recordID, scope: .shared)
            seen["\(name) asset"] = answer.status == 200 ? "\(answer.body.count) bytes" : answer.error?.code.rawValue
            seen["\(name) asset through private"] =
                try await client.downloadAsset(photos[name]!, of: recordID).error?.code.rawValue ?? "ok"
        }
        // Ada's zone that is shared with nobody, and her zones through the private database.
        seen["hidden records/changes"] = await outcome {
            _ = try await client.fetchZoneChanges(hidden, scope: .shared)
            return "ok"
        }
        seen["hidden records/lookup"] = await outcome {
            try await client.lookupRecords([RecordValue.ID(recordName: "Secret", zoneID: hidden)], scope: .shared)
                .failures.first?.error.code.rawValue ?? "ok"
        }
        seen["private records/changes"] = await outcome {
            _ = try await client.fetchZoneChanges(family)
            return "ok"
        }
        seen["shares/fetch"] = await outcome {
            _ = try await client.fetchShare(family, shareRecordName: shareRecordName)
            return "ok"
        }
        seen["shares/save"] = await outcome {
            try await client.saveShare(SaveShareRequest(zoneID: family, participants: []))
            return "ok"
        }
        seen["shares/delete"] = await outcome {
            try await client.deleteShare(family)
            return "ok"
        }
        seen["shares/metadata"] = await outcome {
            try await client.shareMetadata(token: token).participantPermission.rawValue
        }
        return seen
    }

    private func expected(_ role: Role, _ kind: Kind, shareRecordName: String) -> [String: String] {
        let common = [
            "zones/modify save": "permissionFailure", "hidden records/changes": "zoneNotFound",
            "hidden records/lookup": "zoneNotFound", "private records/changes": "permissionFailure",
            "shares/fetch": "permissionFailure", "shares/save": "permissionFailure",
            "shares/delete": "permissionFailure", "Alan asset through private": "permissionFailure",
            "Outsider asset through private": "permissionFailure",
        ]
        let member: [String: String] = [
            "zones/list": "Family", "zones/changes": "Family", "records/lookup": "Alan", "Alan asset": "1000 bytes",
        ]
        let outsider: [String: String] = [
            "zones/list": "", "zones/changes": "", "records/changes": "zoneNotFound",
            "records/lookup": "zoneNotFound", "records/modify save": "zoneNotFound",
            "records/modify delete": "zoneNotFound", "shares/metadata": "unknownItem",
            "outsider records/lookup": "zoneNotFound", "outsider records/modify save": "zoneNotFound",
            "Alan asset": "zoneNotFound", "Outsider asset": "zoneNotFound",
        ]
        // Outsider is in the zone: shared with it whole, or hidden beside a shared hierarchy.
        let seenOfOutsider: [String: String] =
            kind == .zone
            ? [
                "records/changes": "Alan,Outsider,\(shareRecordName)", "outsider records/lookup": "Outsider",
                "outsider records/modify save": role == .readWrite ? "serverRecordChanged" : "permissionFailure",
                "Outsider asset": "2000 bytes",
            ]
            : [
                "records/changes": "Alan,\(shareRecordName)", "outsider records/lookup": "unknownItem",
                "outsider records/modify save": "permissionFailure", "Outsider asset": "unknownItem",
            ]
        switch role {
        case .readWrite:
            return common.merging(member) { a, _ in a }.merging(seenOfOutsider) { a, _ in a }.merging([
                "records/modify save": "ok", "records/modify delete": "ok", "shares/metadata": "readWrite",
            ]) { a, _ in a }
        case .readOnly:
            return common.merging(member) { a, _ in a }.merging(seenOfOutsider) { a, _ in a }.merging([
                "records/modify save": "permissionFailure",
                // New is gone (the read-write participant deleted it): outside the zone-wide check,
                // a record not there answers as not there.
                "records/modify delete": kind == .zone ? "permissionFailure" : "unknownItem",
                "shares/metadata": "readOnly",
            ]) { a, _ in a }
        case .removed, .stranger:
            return common.merging(outsider) { a, _ in a }
        }
    }

    @Test(
        "each person gets exactly what their place in the share allows; Ada's data is unchanged by the others",
        arguments: Kind.allCases)
    func everyRoute(_ kind: Kind) async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let adaID = try await ada.account().userRecordName
            let adaFamily = RecordZone.ID(zoneName: "Family")
            try await ada.saveZones("Family", "Private")
            let photos = [
                "Alan": try await ada.upload([UInt8](repeating: 1, count: 1000)),
                "Outsider": try await ada.upload([UInt8](repeating: 2, count: 2000)),
            ]
            func withPhoto(_ name: String) -> RecordValue {
                var record = contact(name, zone: adaFamily)
                record["photo"] = .asset(photos[name]!)
                return record
            }
            let alan = try #require(try await ada.save([withPhoto("Alan")]).first)
            try await ada.save([withPhoto("Outsider")])
            try await ada.save([contact("Secret", zone: RecordZone.ID(zoneName: "Private"))])
            var people: [Role: TestClient] = [:]
            for role in Role.allCases { people[role] = try await anonymous.signedUp(username: role.rawValue) }
            func id(_ role: Role) async throws -> String { try await people[role]!.account().userRecordName }
            func save(_ roles: [Role], root: RecordValue?, shareRecordName: String?) async throws -> Share {
                var invitees: [SaveShareRequest.Invitee] = []
                for role in roles {
                    invitees.append(
                        .init(
                            userRecordName: try await id(role), permission: role == .readOnly ? .readOnly : .readWrite))
                }
                return try await ada.saveShare(
                    SaveShareRequest(
                        zoneID: adaFamily, participants: invitees, rootRecord: root, shareRecordName: shareRecordName))
            }
            let share = try await save(
                [.readWrite, .readOnly, .removed], root: kind == .hierarchy ? alan : nil, shareRecordName: nil)
            for role in [Role.readWrite, .readOnly, .removed] {
                try await people[role]!.acceptShare(token: share.token)
            }
            let shareRecordName = kind == .hierarchy ? share.recordName : nil
            _ = try await save([.readWrite, .readOnly], root: nil, shareRecordName: shareRecordName)
            let family = RecordZone.ID(zoneName: "Family", ownerName: adaID)
            let hidden = RecordZone.ID(zoneName: "Private", ownerName: adaID)
            let privateBefore = try await ada.contents(of: RecordZone.ID(zoneName: "Private"))
            let familyBefore = try await ada.contents(of: adaFamily)

            for role in Role.allCases {
                let seen = try await walk(
                    people[role]!, family: family, hidden: hidden, token: share.token,
                    shareRecordName: share.recordName, photos: photos.mapValues(\.assetID))
                let expected = expected(role, kind, shareRecordName: share.recordName)
                for route in expected.keys.sorted() {
                    #expect(seen[route] == expected[route], "\(role) on \(route)")
                }
            }
            for (name, photo) in photos {
                let answer = try await ada.downloadAsset(photo.assetID, of: .init(recordName: name, zoneID: adaFamily))
                #expect(answer.status == 200 && answer.body.count == photo.size, "Ada downloads her \(name)'s photo")
            }
            #expect(try await ada.contents(of: RecordZone.ID(zoneName: "Private")) == privateBefore)
            let familyAfter = try await ada.contents(of: adaFamily)
            #expect(Set(familyAfter.keys) == Set(familyBefore.keys), "the read-write participant's New came and went")
            #expect(familyAfter["Outsider"] == familyBefore["Outsider"], "Outsider is untouched")
            #expect(
                try await ada.fetchShare(adaFamily, shareRecordName: shareRecordName).participants.count == 3)
        }
    }
}
