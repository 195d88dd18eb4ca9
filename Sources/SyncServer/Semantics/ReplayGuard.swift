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

    /// The stored answer for a replay, or `invalidArguments` when the ID was used for another request.
    public static func replay(storedHash: Data, storedResponse: Data, bodyHash: Data, requestID: String) throws
        -> [UInt8]
    {
        guard storedHash == bodyHash else {
            throw SyncError(
                .invalidArguments,
                "clientRequestID '\(requestID)' was already used for a different request; use a new ID for each request"
            )
        }
        return [UInt8](storedResponse)
    }
}
