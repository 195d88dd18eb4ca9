import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SyncCore

/// Reads JSON request bodies within the server's size limit and writes JSON responses.
struct BodyCoding: Sendable {
    let limits: ServerLimits

    /// Decodes the body; an empty body decodes as `{}` when `allowEmpty` is set.
    func decode<T: Decodable>(_ type: T.Type, from request: Request, allowEmpty: Bool = false) async throws -> T {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limits.maximumRequestBytes)
        } catch is NIOTooManyBytesError {
            throw SyncError(
                .limitExceeded,
                "the request body is larger than \(limits.maximumRequestBytes) bytes; split it into smaller requests")
        }
        let data = buffer.readableBytes == 0 && allowEmpty ? Data("{}".utf8) : Data(buffer.readableBytesView)
        return try JSONReader.decode(T.self, from: data)
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
