import Crypto
import Foundation
import SyncCore

/// Makes a replayed modify request (same `clientRequestID`) harmless: the first answer is
/// returned again and nothing is applied twice. Reusing an ID for a different request is refused.
public enum ReplayGuard {
    /// A fingerprint of the request, to tell a true replay from an ID reused by mistake.
    public static func hash(of request: ModifyRecordsRequest) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Data(SHA256.hash(data: try encoder.encode(request)))
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
