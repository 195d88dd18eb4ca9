import HTTPTypes

/// A request the bridge refuses: the status, a sentence for the person who reads the client's log, and
/// the precondition element of RFC 4918 / 6352 / 6578 the client may act on (`valid-sync-token`…).
struct DAVError: Error, Sendable {
    var status: HTTPResponse.Status
    var message: String
    /// (namespace, local name) of the condition, written in a `DAV:error` body.
    var condition: (namespace: String, name: String, href: String?)?

    init(_ status: HTTPResponse.Status, _ message: String, condition: (String, String, String?)? = nil) {
        self.status = status
        self.message = message
        self.condition = condition.map { (namespace: $0.0, name: $0.1, href: $0.2) }
    }
}

extension HTTPResponse.Status {
    /// RFC 4918's answer of many parts.
    static var multiStatus: Self { .init(code: 207, reasonPhrase: "Multi-Status") }
    /// RFC 4918: a truncated answer's marker on its collection (RFC 6578 §3.6).
    static var insufficientStorage: Self { .init(code: 507, reasonPhrase: "Insufficient Storage") }
}
