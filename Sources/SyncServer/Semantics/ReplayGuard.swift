import Crypto
import Foundation
import SyncCore

/// Makes a replayed modify request (same `clientRequestID`) harmless: the first answer is
/// returned again and nothing is applied twice. Reusing an ID for a different request is refused.
public enum ReplayGuard {
    /// A fingerprint of the request, to tell a true replay from an ID reused by mistake.
    ///
    /// It hashes the request as ``JSONWriter`` writes it: fields and changed keys sorted, so equal
    /// requests give equal bytes, and several times faster than `JSONEncoder` on wide records.
    ///
    /// - Parameter savedFields: each save's fields as ``FieldCoding`` encodes them, when the
    ///   caller has them already.
    public static func hash(of request: ModifyRecordsRequest, savedFields: [Data]? = nil) throws -> Data {
        var writer = JSONWriter(capacity: 4096)
        writer.modifyRecordsRequest(request, savedFields: savedFields)
        return Data(SHA256.hash(data: writer.bytes))
    }

    /// What to keep of an answer for its replays. The saved records' fields are the request's own
    /// (unless only changed keys were sent, and the server merged them with what it had), and a replay
    /// is the same request, as its hash proves: so they are left out and put back from the replayed
    /// request, which halves what an upload writes. The first byte tells the two forms apart: a whole
    /// answer (as earlier versions stored every answer) begins with `{`.
    ///
    /// - Parameter responseBody: the answer as sent, ``RecordModificationPlanner/Plan/responseBody(withSavedFields:)``.
    public static func stored(
        _ plan: RecordModificationPlanner.Plan, responseBody: [UInt8], for request: ModifyRecordsRequest
    ) throws -> Data {
        // Kept as sent when its saved records carry no fields anyway, or fields the request does not hold.
        if request.savePolicy == .changedKeys || request.desiredKeys?.isEmpty == true { return Data(responseBody) }
        return Data([withoutSavedFields] + (try plan.responseBody(withSavedFields: false)))
    }

    private static let withoutSavedFields: UInt8 = 1

    /// The stored answer for a replay, or `invalidArguments` when the ID was used for another request.
    ///
    /// - Parameter savedFields: each save's fields as ``FieldCoding`` encodes them.
    public static func replay(
        storedHash: Data, storedResponse: Data, bodyHash: Data, requestID: String, request: ModifyRecordsRequest,
        savedFields: [Data]
    ) throws -> [UInt8] {
        guard storedHash == bodyHash else {
            throw SyncError(
                .invalidArguments,
                "clientRequestID '\(requestID)' was already used for a different request; use a new ID for each request"
            )
        }
        guard storedResponse.first == withoutSavedFields else { return [UInt8](storedResponse) }
        let answer = try JSONReader.decode(ModifyRecordsResponse.self, from: storedResponse.dropFirst())
        var fields: [RecordValue.ID: Data] = [:]
        for (save, encoded) in zip(request.saves, savedFields) {
            fields[save.recordID] = try FieldCoding.selecting(request.desiredKeys, from: encoded)
        }
        return try RecordModificationPlanner.Plan.responseBody(
            saved: answer.savedRecords, failedSaves: answer.failedRecordSaves, deleted: answer.deletedRecordIDs,
            failedDeletes: answer.failedRecordDeletes
        ) { writer, record in
            let raw = fields[record.recordID].flatMap { $0.isEmpty ? nil : $0 } ?? Data("{}".utf8)
            writer.record(record, rawFields: raw)
        }
    }
}
