import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SyncCore

/// Reads JSON request bodies within the server's size limit and writes JSON responses.
struct BodyCoding: Sendable {
    let limits: ServerLimits

    /// Decodes a body the route requires. Every value is checked as it is read (see ``JSONReader``):
    /// a mistake answers `invalidArguments` naming the member.
    func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        let buffer = try await collect(request)
        guard buffer.readableBytes > 0 else {
            throw SyncError(
                .invalidArguments,
                "the request body is empty; this route needs a JSON object as described in openapi.yaml")
        }
        return try JSONReader.decode(T.self, from: Data(buffer.readableBytesView))
    }

    /// Checks a body the route accepts but does not read: none at all, or a JSON object.
    func checkOptionalObject(in request: Request) async throws {
        let buffer = try await collect(request)
        guard buffer.readableBytes > 0 else { return }
        _ = try JSONReader.decode(IgnoredObject.self, from: Data(buffer.readableBytesView))
    }

    private func collect(_ request: Request) async throws -> ByteBuffer {
        var request = request
        do {
            return try await request.collectBody(upTo: limits.maximumRequestBytes)
        } catch is NIOTooManyBytesError {
            throw SyncError(
                .limitExceeded,
                "the request body is larger than \(limits.maximumRequestBytes) bytes; split it into smaller requests")
        }
    }

    /// Any JSON object, its members unread.
    private struct IgnoredObject: Decodable {
        private struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            _ = try decoder.container(keyedBy: AnyKey.self)
        }
    }

    func response<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        response(bytes: try JSONEncoder().encode(value), status: status)
    }

    /// A response whose JSON body was written already.
    func response(bytes: some Sequence<UInt8>, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
