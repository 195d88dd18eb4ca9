import Foundation
import Hummingbird
import SyncCore

/// `GET /v1/account/usage`: the signed-in account's storage in use and its limit.
struct AccountUsageRoutes {
    let store: any RecordStore
    let body: BodyCoding

    /// The caller's ``StorageUsage``: the bytes of its records' fields (what counts is described at
    /// ``StorageQuota``) and its quota, nil when it has none.
    func usage(_ request: Request, context: SyncRequestContext) async throws -> Response {
        let user = try context.requireUser()
        return try body.response(try await store.storageUsage(owner: user))
    }
}
