import Foundation
import NIOHTTP1
import SyncCore

/// The server's share routes (`/v1/shares/…`, `/v1/users/lookup`), which belong to no database.
extension DatabaseClient {
    package func lookupUsers(_ request: LookupUsersRequest) async throws -> LookupUsersResponse {
        try await post(.lookupUsers, request)
    }

    package func saveShare(_ request: SaveShareRequest) async throws -> Share {
        try await post(.saveShare, request)
    }

    package func fetchShare(_ request: ShareZoneRequest) async throws -> Share {
        try await post(.fetchShare, request)
    }

    package func deleteShare(_ request: ShareZoneRequest) async throws {
        _ = try await send(.deleteShare, body: Array(try JSONEncoder().encode(request)))
    }

    package func shareMetadata(_ request: ShareTokenRequest) async throws -> ShareMetadata {
        try await post(.shareMetadata, request)
    }

    package func acceptShare(_ request: ShareTokenRequest) async throws -> ShareMetadata {
        try await post(.acceptShare, request)
    }

    package func declineShare(_ request: ShareTokenRequest) async throws {
        _ = try await send(.declineShare, body: Array(try JSONEncoder().encode(request)))
    }

    package func invitations() async throws -> InvitationsResponse {
        try decode(InvitationsResponse.self, try await send(.invitations, body: nil))
    }
}
