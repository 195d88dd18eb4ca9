import AsyncHTTPClient
import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import Listeners
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import SyncCrypto
import SyncServer
import SyncTesting
import Testing

@testable import ContactsDAV

/// A bridge serving `device` over loopback, as `contacts dav` serves one, and a client of it.
struct Bridge {
    let base: String
    let credentials: BridgeCredentials
    let device: ContactsDevice
    let client: HTTPClient

    struct Reply {
        var status: Int
        var headers: HTTPHeaders
        var body: String

        func header(_ name: String) -> String? { headers[name].first }

        /// The body as XML (the test fails when it is not).
        func xml() throws -> XMLNode { try XMLNode.parse(Data(body.utf8)) }

        /// The `DAV:response` elements of a multistatus, by href.
        func responses() throws -> [String: XMLNode] {
            let root = try xml()
            var byHref: [String: XMLNode] = [:]
            for response in root.all(Namespace.dav, "response") {
                byHref[response.child(Namespace.dav, "href")?.text ?? ""] = response
            }
            return byHref
        }

        /// The text of the first element named so anywhere in the body.
        func first(_ namespace: String, _ name: String) throws -> XMLNode? { try xml().descendant(namespace, name) }
    }

    func request(
        _ method: String, _ path: String, body: String? = nil, bytes: [UInt8]? = nil, chunked: String? = nil,
        headers: [(String, String)] = [], authenticated: Bool = true
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: base + path)
        request.method = HTTPMethod(rawValue: method)
        if authenticated {
            let token = Data("\(credentials.username):\(credentials.password)".utf8).base64EncodedString()
            request.headers.add(name: "Authorization", value: "Basic \(token)")
        }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let bytes = bytes ?? body.map({ Array($0.utf8) }) {
            request.body = .bytes(ByteBuffer(bytes: bytes))
            if !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
                request.headers.add(name: "Content-Type", value: "application/xml; charset=utf-8")
            }
        }
        if let chunked {
            // A body of unknown length: sent with Transfer-Encoding: chunked, 4 KiB a chunk.
            let chunks = stride(from: 0, to: chunked.utf8.count, by: 4096).map { start in
                ByteBuffer(bytes: Array(chunked.utf8.dropFirst(start).prefix(4096)))
            }
            let stream = AsyncStream<ByteBuffer> { continuation in
                for chunk in chunks { continuation.yield(chunk) }
                continuation.finish()
            }
            request.body = .stream(stream, length: .unknown)
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    func propfind(_ path: String, depth: String = "0", _ props: String) async throws -> Reply {
        try await request(
            "PROPFIND", path,
            body:
                "<d:propfind xmlns:d=\"DAV:\" xmlns:card=\"urn:ietf:params:xml:ns:carddav\" xmlns:cs=\"http://calendarserver.org/ns/\"><d:prop>\(props)</d:prop></d:propfind>",
            headers: [("Depth", depth)])
    }

    func report(_ path: String, _ body: String) async throws -> Reply {
        try await request("REPORT", path, body: body, headers: [("Depth", "1")])
    }

    func put(_ path: String, _ card: String, headers: [(String, String)] = []) async throws -> Reply {
        try await request("PUT", path, body: card, headers: [("Content-Type", "text/vcard; charset=utf-8")] + headers)
    }

    /// The default book's path.
    static let contacts = "/books/Contacts/"
}

extension XMLNode {
    /// The first element named so, this one or below.
    func descendant(_ namespace: String, _ name: String) -> XMLNode? {
        if self.is(namespace, name) { return self }
        for child in children {
            if let found = child.descendant(namespace, name) { return found }
        }
        return nil
    }
}

/// Devices of one account ("ada") syncing through a real server, the first served by a bridge on loopback.
/// `automaticallySync` devices sync by themselves (push and the scheduler, over loopback) and the bridge
/// sends a client's write at once, as `contacts dav` does; otherwise every sync is the test's.
func withBridge(
    devices count: Int = 2, automaticallySync: Bool = false, limits: DAVBridge.Limits = DAVBridge.Limits(),
    _ body: (Bridge, [ContactsDevice], TestServer, String) async throws -> Void
) async throws {
    try await withContactsDevices(
        count, transport: automaticallySync ? .loopback : .inProcess, automaticallySync: automaticallySync
    ) { server, directory, devices in
        let credentials = try BridgeCredentials.load(dataDirectory: directory, device: devices[0].name)
        let bridge = try DAVBridge(
            device: devices[0], credentials: credentials, limits: limits, logger: Logger(label: "dav-tests"),
            sendsWritesAtOnce: automaticallySync)
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let service = try DAVServer(address: ListenAddress(host: "127.0.0.1", port: 0), tls: nil).service(
            bridge: bridge, logger: Logger(label: "dav-tests")
        ) { port in portSink.yield(port) }
        let group = ServiceGroup(services: [service], logger: Logger(label: "dav-tests"))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw BridgeTestError("the bridge did not start") }
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            try await body(
                Bridge(
                    base: "http://127.0.0.1:\(port)", credentials: credentials, device: devices[0], client: client),
                devices, server, directory)
        } catch {
            try? await client.shutdown()
            await group.triggerGracefulShutdown()
            _ = await running.result
            throw error
        }
        try await client.shutdown()
        await bridge.finishSending()
        await group.triggerGracefulShutdown()
        try await running.value
    }
}

struct BridgeTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A vCard 3.0 with CRLF line ends.
func card(_ lines: [String], version: String = "3.0") -> String {
    (["BEGIN:VCARD", "VERSION:\(version)"] + lines + ["END:VCARD"]).joined(separator: "\r\n") + "\r\n"
}

extension DAVBridge.Limits {
    /// The default limits with one changed: a small page, so that a few contacts fill several.
    static func with(_ change: (inout Self) -> Void) -> Self {
        var limits = Self()
        change(&limits)
        return limits
    }
}
