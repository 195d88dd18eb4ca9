import Foundation
import SyncCore

#if canImport(Glibc)
    import Glibc
#endif

/// An answer read off a plain socket.
struct RawHTTPAnswer {
    var status: Int
    var headers: [(String, String)]
    var body: Data

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var error: SyncError? { try? JSONDecoder().decode(SyncError.self, from: body) }

    /// Parses one HTTP response: its head, and its body up to its `Content-Length` (all that
    /// follows the head when there is none).
    init(parsing data: Data) throws {
        guard let end = data.firstRange(of: Data("\r\n\r\n".utf8)) else {
            throw RawHTTP.Failure(description: "no complete answer head in \(String(decoding: data, as: UTF8.self))")
        }
        let lines = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw RawHTTP.Failure(description: "not a status line: \(lines[0])")
        }
        headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        self.status = status
        body = Data(data[end.upperBound...])
        if let length = header("Content-Length").flatMap(Int.init), body.count > length {
            body = body.prefix(length)
        }
    }
}

/// One HTTP/1.1 exchange over a plain TCP socket to a loopback server, from a chosen loopback
/// address: what an HTTP library will not send (WebSocket upgrade headers on a plain request), and
/// a second "machine" for per-address limits (127.0.0.2 and 127.0.0.3 reach 127.0.0.1 on Linux).
enum RawHTTP {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends the request with `Connection: close` (unless `headers` names a `Connection`) and reads
    /// the answer until the server closes or the body is complete. Gives up after 60 s of silence.
    static func exchange(
        port: Int, from source: String = "127.0.0.1", _ method: String, _ path: String,
        headers: [(String, String)] = [], body: Data? = nil
    ) async throws -> RawHTTPAnswer {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "connection" }) { head += "Connection: close\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        let request = Data((head + "\r\n").utf8) + (body ?? Data())
        // Blocking socket calls run on a thread of their own, never on the tasks the server needs.
        let bytes = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
            Thread {
                continuation.resume(with: Result { try blockingExchange(port: port, source: source, request: request) })
            }.start()
        }
        return try RawHTTPAnswer(parsing: bytes)
    }

    private static func blockingExchange(port: Int, source: String, request: Data) throws -> Data {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func address(_ host: String, _ port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr(host)
            address.sin_port = UInt16(port).bigEndian
            return address
        }
        func call(_ name: String, _ body: (UnsafePointer<sockaddr>) -> Int32, _ address: sockaddr_in) throws {
            var address = address
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
            }
            guard result == 0 else { throw Failure(description: "\(name): \(String(cString: strerror(errno)))") }
        }
        try call("bind", { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }, address(source, 0))
        try call(
            "connect", { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) },
            address("127.0.0.1", port))
        try request.withUnsafeBytes { buffer in
            var sent = 0
            while sent < buffer.count {
                let count = send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
                guard count > 0 else { throw Failure(description: "send: \(String(cString: strerror(errno)))") }
                sent += count
            }
        }
        var received = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while !isComplete(received) {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count == 0 { break }
            guard count > 0 else {
                throw Failure(
                    description:
                        "recv: \(String(cString: strerror(errno))) after \(received.count) bytes: \(String(decoding: received, as: UTF8.self))"
                )
            }
            received.append(contentsOf: chunk[0..<count])
        }
        return received
    }

    /// Whether `data` holds a whole answer with a `Content-Length` body.
    private static func isComplete(_ data: Data) -> Bool {
        guard let answer = try? RawHTTPAnswer(parsing: data),
            let length = answer.header("Content-Length").flatMap(Int.init)
        else {
            return false
        }
        return answer.body.count >= length
    }

}
