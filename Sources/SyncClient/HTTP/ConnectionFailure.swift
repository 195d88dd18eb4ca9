import AsyncHTTPClient
import NIOCore
import NIOPosix
import NIOSSL

#if canImport(Glibc)
    import Glibc
#endif

/// Why a request got no answer, in words a person can act on. The network libraries describe their
/// errors by their types and codes ("connection reset (error set): Connection refused) (errno: 111)",
/// "handshakeFailed(NIOSSL.BoringSSLError.sslError([…WRONG_VERSION_NUMBER…]))"); these say what it means.
enum ConnectionFailure {
    /// What kept the answer away; the error's own description when it is none of the known ones.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as NIOConnectionError:
            if let lookup = error.dnsAError ?? error.dnsAAAAError { return describe(lookup) }
            if let first = error.connectionErrors.first { return describe(first.error) }
            return "no connection could be made to \(error.host):\(error.port)"
        case let error as SocketAddressError.UnknownHost:
            return "the host name \(error.host) does not resolve (\(error.errorDescription))"
        case let error as IOError:
            return describe(errno: error.errnoCode)
        case let error as HTTPClientError:
            return describe(error)
        case let error as NIOSSLError:
            return describe(tls: error)
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return "the TLS handshake failed: the server's certificate is for another host name"
        default:
            return "\(error)"
        }
    }

    /// A system call's failure on the connection.
    static func describe(errno code: CInt) -> String {
        switch code {
        case ECONNREFUSED: "nothing listens there (connection refused)"
        case ENOENT: "there is no server socket there"
        case ETIMEDOUT: "no connection within the time allowed"
        case ECONNRESET, EPIPE: "the server closed the connection before it answered"
        case ENETUNREACH, EHOSTUNREACH: "this machine has no route to it (\(String(cString: strerror(code))))"
        default: String(cString: strerror(code))
        }
    }

    /// The client's own failures, in the words of the system's where they are the same.
    private static func describe(_ error: HTTPClientError) -> String {
        switch error {
        case .connectTimeout: describe(errno: ETIMEDOUT)
        case .readTimeout, .deadlineExceeded: "no answer within the time allowed"
        case .remoteConnectionClosed: describe(errno: ECONNRESET)
        default: "\(error)"
        }
    }

    /// A TLS failure. BoringSSL's reasons are read from its text: they are strings, not cases.
    private static func describe(tls error: NIOSSLError) -> String {
        let text = "\(error)"
        if text.contains("WRONG_VERSION_NUMBER") {
            return "the TLS handshake failed: what answers there does not speak TLS (a plain http:// server?)"
        }
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the TLS handshake failed: the server's certificate is not one this machine trusts"
        }
        return "the TLS handshake failed (\(text))"
    }
}
