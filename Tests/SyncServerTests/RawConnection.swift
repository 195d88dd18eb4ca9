import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A client's TCP connection to a loopback server, driven byte by byte: what a slow, broken or
/// hostile client sends, which no HTTP library will. It connects from a chosen loopback address
/// (127.0.0.2, 127.0.0.3, … reach 127.0.0.1 on Linux), so that a test can be several machines.
///
/// Blocking socket calls run on threads of their own, never on the tasks the server needs.
final class RawConnection: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// How reading ended.
    enum Ending: Equatable, CustomStringConvertible {
        /// The server closed the connection (end of stream).
        case closed
        /// The server reset the connection.
        case reset
        /// Nothing ended it before the deadline: the connection is still open.
        case stillOpen

        var description: String {
            switch self {
            case .closed: "closed by the server"
            case .reset: "reset by the server"
            case .stillOpen: "still open"
            }
        }
    }

    /// What was read, and how reading ended.
    struct Outcome: CustomStringConvertible {
        var bytes: Data
        var ending: Ending

        /// The server ended the connection, either way.
        var wasEnded: Bool { ending != .stillOpen }

        var text: String { String(decoding: bytes, as: UTF8.self) }

        var description: String {
            "\(ending) after \(bytes.count) bytes" + (bytes.isEmpty ? "" : ": \(text.prefix(400))")
        }
    }

    let source: String
    private let descriptor: Int32
    /// Bytes read but not yet taken by ``response(within:)``.
    private let unread = Mutex(Data())

    private init(descriptor: Int32, source: String) {
        self.descriptor = descriptor
        self.source = source
    }

    deinit { close(descriptor) }

    /// Connects to 127.0.0.1:`port` from `source`.
    static func open(port: Int, from source: String = "127.0.0.1") async throws -> RawConnection {
        try await onThread {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw failure("socket") }
            // Each receive waits at most a second, so that a read can check its deadline.
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var sendTimeout = timeval(tv_sec: 60, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
            do {
                try call("bind", descriptor, address(source, 0)) { bind($0, $1, $2) }
                try call("connect", descriptor, address("127.0.0.1", port)) { connect($0, $1, $2) }
            } catch {
                close(descriptor)
                throw error
            }
            return RawConnection(descriptor: descriptor, source: source)
        }
    }

    /// Sends `bytes`; throws if the server closed or reset the connection first.
    func send(_ bytes: some Sequence<UInt8> & Sendable) async throws {
        let data = Data(bytes)
        try await Self.onThread { [descriptor] in
            try data.withUnsafeBytes { buffer in
                var sent = 0
                while sent < buffer.count {
                    let count = Glibc.send(
                        descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
                    guard count > 0 else { throw Self.failure("send") }
                    sent += count
                }
            }
        }
    }

    /// Sends `text` as UTF-8.
    func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    /// Says the client has sent all it will (a half-close): the server may read to the end.
    func finishSending() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Reads until the server ends the connection or `timeout` passes; the generous deadline only
    /// matters when the server fails to end it.
    func readUntilEnded(within timeout: Duration = .seconds(60)) async -> Outcome {
        let already = unread.withLock { data in
            defer { data = Data() }
            return data
        }
        let outcome =
            (try? await Self.onThread { [descriptor] in
                Self.read(from: descriptor, until: ContinuousClock.now + timeout) { _ in false }
            }) ?? Outcome(bytes: Data(), ending: .reset)
        return Outcome(bytes: already + outcome.bytes, ending: outcome.ending)
    }

    /// Reads one whole HTTP response (a head, and a body as long as its `Content-Length`), leaving
    /// the connection open; throws if the connection ends first or `timeout` passes.
    func response(within timeout: Duration = .seconds(60)) async throws -> RawHTTPAnswer {
        try Self.parse(try await take("an HTTP response", within: timeout, length: Self.responseLength(in:)))
    }

    /// Reads WebSocket frames from the server until a text message; returns its text. Pings and
    /// other control frames are skipped.
    func webSocketText(within timeout: Duration = .seconds(60)) async throws -> String {
        while true {
            let frame = try await take("a WebSocket frame", within: timeout, length: Self.frameLength(in:))
            let bytes = [UInt8](frame)
            let opcode = bytes[0] & 0x0F
            let shortLength = Int(bytes[1] & 0x7F)
            let headerLength = shortLength == 126 ? 4 : shortLength == 127 ? 10 : 2
            if opcode == 0x1 { return String(decoding: bytes[headerLength...], as: UTF8.self) }
            if opcode == 0x8 { throw Failure(description: "the server closed the WebSocket") }
        }
    }

    /// Says goodbye: shuts the connection both ways, as a client that closes its socket.
    func disconnect() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Takes the first `length(unread)` bytes, reading until there are that many.
    private func take(_ what: String, within timeout: Duration, length: @escaping @Sendable (Data) -> Int?)
        async throws -> Data
    {
        var bytes = unread.withLock { data in
            defer { data = Data() }
            return data
        }
        if length(bytes) == nil {
            let outcome = try await Self.onThread { [descriptor, bytes] in
                var seen = bytes
                return Self.read(from: descriptor, until: ContinuousClock.now + timeout) { chunk in
                    seen.append(chunk)
                    return length(seen) != nil
                }
            }
            bytes += outcome.bytes
            guard length(bytes) != nil else {
                unread.withLock { $0 = bytes }
                throw Failure(
                    description: "no whole \(what): \(Outcome(bytes: bytes, ending: outcome.ending))")
            }
        }
        let count = length(bytes)!
        unread.withLock { $0 = Data(bytes.dropFirst(count)) }
        return Data(bytes.prefix(count))
    }

    /// The length of a whole unmasked WebSocket frame at the start of `data`, if whole.
    private static func frameLength(in data: Data) -> Int? {
        let bytes = [UInt8](data.prefix(10))
        guard bytes.count >= 2 else { return nil }
        let shortLength = Int(bytes[1] & 0x7F)
        let (headerLength, payloadLength): (Int, Int)
        switch shortLength {
        case 126:
            guard bytes.count >= 4 else { return nil }
            (headerLength, payloadLength) = (4, Int(bytes[2]) << 8 | Int(bytes[3]))
        case 127:
            guard bytes.count >= 10 else { return nil }
            (headerLength, payloadLength) = (10, bytes[2..<10].reduce(0) { $0 << 8 | Int($1) })
        default:
            (headerLength, payloadLength) = (2, shortLength)
        }
        return data.count >= headerLength + payloadLength ? headerLength + payloadLength : nil
    }

    /// Parses what `readUntilEnded` read as one HTTP response.
    static func parse(_ data: Data) throws -> RawHTTPAnswer {
        try RawHTTPAnswer(parsing: data)
    }

    /// The length of the first whole response in `data` (head and `Content-Length` body), if whole.
    private static func responseLength(in data: Data) -> Int? {
        guard let end = data.firstRange(of: Data("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).lowercased()
        let length =
            head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        let total = end.upperBound - data.startIndex + length
        return data.count >= total ? total : nil
    }

    private static func read(
        from descriptor: Int32, until deadline: ContinuousClock.Instant, done: (Data) -> Bool
    ) -> Outcome {
        var received = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while ContinuousClock.now < deadline {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count == 0 { return Outcome(bytes: received, ending: .closed) }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                return Outcome(bytes: received, ending: .reset)
            }
            let piece = Data(chunk[0..<count])
            received.append(piece)
            if done(piece) { break }
        }
        return Outcome(bytes: received, ending: .stillOpen)
    }

    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    private static func failure(_ call: String) -> Failure {
        Failure(description: "\(call): \(String(cString: strerror(errno)))")
    }

    private static func address(_ host: String, _ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    private static func call(
        _ name: String, _ descriptor: Int32, _ address: sockaddr_in,
        _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) throws {
        var address = address
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw failure(name) }
    }
}
