import Foundation
import NIOHTTP1
import SyncCore

extension DatabaseClient {
    /// `PUT /v1/account/encryption/key-pair`: publishes the account's key pair. The server keeps the
    /// first one an account gets: when it has one, this throws `serverRecordChanged`, and the stored pair
    /// is the one to use (``encryptionSettings()`` returns it).
    package func createKeyPair(_ keyPair: AccountKeyPair) async throws {
        _ = try await send(.PUT, "/v1/account/encryption/key-pair", body: Array(try JSONEncoder().encode(keyPair)))
    }
}
