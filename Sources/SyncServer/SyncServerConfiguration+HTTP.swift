import Foundation

extension SyncServerConfiguration {
    /// How the server defends its HTTP connections against clients that are slow, idle, too big or
    /// too many. The largest request body is not here: it is ``ServerLimits/maximumRequestBytes``,
    /// the one `GET /v1/limits` states.
    ///
    /// - A request's head (request line and headers) must arrive whole within
    ///   ``requestHeadTimeout`` of its first byte (of the connection's opening, for its first
    ///   request); otherwise the connection is closed. Sending a byte now and then does not help.
    /// - A kept-alive connection with no request for ``idleTimeout`` is closed.
    /// - A request's body must arrive whole within ``requestBodyTimeout`` of its head; otherwise
    ///   the connection is closed. Time the server spends not reading (it has not yet taken what
    ///   arrived) does not count against the client.
    /// - A head larger than ``maximumHeaderBytes`` gets `431`; malformed HTTP (a garbage request
    ///   line, `Content-Length` with `Transfer-Encoding`, an invalid `Content-Length`, an upgrade
    ///   to anything but the push WebSocket) gets `400`; these answers say `Connection: close`, and
    ///   the connection closes after them.
    /// - A declared body larger than the request limit gets `413 limitExceeded` before a byte of
    ///   it is read. Up to 8 times the limit, the body that follows is then read and dropped, so
    ///   that clients that send their whole body before they read (AsyncHTTPClient does) get the
    ///   `413` rather than a broken connection; a larger one closes the connection. A chunked body
    ///   that grows past the limit gets `413` from its route, and the connection closes.
    /// - Every answer of these has CloudKit's JSON error body.
    /// - Beyond ``maximumConnections`` open connections, or ``maximumConnectionsPerAddress`` from
    ///   one client address, a new connection is closed at once, before a byte of it is read:
    ///   answering it would cost the memory and time the limit is there to protect. Clients see a
    ///   network failure and retry later. Push WebSockets count as connections.
    ///
    /// Push WebSockets (`GET /v1/push`) have no timeouts of these: the server pings them every 30
    /// seconds and closes one whose client stops answering.
    public struct HTTPLimits: Sendable, Hashable {
        /// How long a request's head may take to arrive, from its first byte.
        public var requestHeadTimeout: Duration
        /// How long a kept-alive connection may wait for its next request. Longer than the 60
        /// seconds clients such as AsyncHTTPClient keep idle connections, so that the client is
        /// the one to close them and never sends a request on a connection the server is closing.
        public var idleTimeout: Duration
        /// How long a request's body may take to arrive, from its head.
        public var requestBodyTimeout: Duration
        /// The most bytes of a request's head: its request line plus its header names and values.
        public var maximumHeaderBytes: Int
        /// The most connections open at once, push WebSockets included. Keep it below the
        /// process's file descriptor limit (`ulimit -n`, often 1024), which SQLite shares.
        public var maximumConnections: Int
        /// The most connections open at once from one client address. Behind a proxy or a shared
        /// NAT, every client has that address.
        public var maximumConnectionsPerAddress: Int

        /// The defaults: a head within 15 s, 75 s idle, a body within 60 s (2 MiB at 35 KB/s),
        /// 16 KiB of head, 512 connections and 64 per address.
        public init(
            requestHeadTimeout: Duration = .seconds(15), idleTimeout: Duration = .seconds(75),
            requestBodyTimeout: Duration = .seconds(60), maximumHeaderBytes: Int = 16 * 1024,
            maximumConnections: Int = 512, maximumConnectionsPerAddress: Int = 64
        ) {
            self.requestHeadTimeout = requestHeadTimeout
            self.idleTimeout = idleTimeout
            self.requestBodyTimeout = requestBodyTimeout
            self.maximumHeaderBytes = maximumHeaderBytes
            self.maximumConnections = maximumConnections
            self.maximumConnectionsPerAddress = maximumConnectionsPerAddress
        }
    }
}
