/// Why the bridge cannot start; each says what to do.
public enum BridgeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The password file is there but holds no password.
    case damagedPasswordFile(String)
    /// An address that is not loopback, without TLS.
    case plainTextBeyondLoopback(String)
    /// Only one of the certificate and its key.
    case tlsNeedsBoth
    /// The address is not `HOST:PORT`.
    case badAddress(String)

    public var description: String {
        switch self {
        case .damagedPasswordFile(let path):
            "the bridge's password file \(path) holds no password; delete it and start the bridge again to make a new one (then give DAV clients the new password)"
        case .plainTextBeyondLoopback(let address):
            "the bridge would send contacts and its password unencrypted to \(address); listen on 127.0.0.1 or [::1], or give --tls-certificate and --tls-key"
        case .tlsNeedsBoth:
            "--tls-certificate and --tls-key go together: give both, or neither"
        case .badAddress(let text):
            "'\(text)' is not an address to listen on; give HOST:PORT, such as 127.0.0.1:5233 or [::1]:5233"
        }
    }
}
