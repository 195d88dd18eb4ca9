import Foundation
import LocalSystem
import Synchronization

/// How this process trusts sync servers it reaches over the network: the certificates that may
/// vouch for an `https://` server, and whether plain `http://` may carry a token or password to an
/// address that is not this machine.
///
/// One setting for the process, read from the environment at first use (`SYNCKIT_CA_FILE`,
/// `SYNCKIT_ALLOW_INSECURE_HTTP=1`), which a program may replace at start from its own options
/// (`contacts --ca-file`, `--allow-insecure-http`).
public struct TransportSecurity: Sendable, Hashable {
    /// A PEM file of the certificate authorities to trust instead of the system's, for a server
    /// with a certificate of its own making.
    public var caFile: String?
    /// Lets tokens and passwords go over plain HTTP to other machines. Anyone on the network path can
    /// read them then: meant for a network the user controls end to end.
    public var allowsInsecureHTTP: Bool

    public init(caFile: String? = nil, allowsInsecureHTTP: Bool = false) {
        self.caFile = caFile
        self.allowsInsecureHTTP = allowsInsecureHTTP
    }

    /// The settings from `SYNCKIT_CA_FILE` and `SYNCKIT_ALLOW_INSECURE_HTTP` in the process's environment.
    public static func fromEnvironment() -> TransportSecurity { fromEnvironment(EnvironmentVariable.value) }

    /// The settings from `SYNCKIT_CA_FILE` and `SYNCKIT_ALLOW_INSECURE_HTTP` in `environment`.
    public static func fromEnvironment(_ environment: [String: String]) -> TransportSecurity {
        fromEnvironment { environment[$0] }
    }

    private static func fromEnvironment(_ value: (String) -> String?) -> TransportSecurity {
        TransportSecurity(
            caFile: value("SYNCKIT_CA_FILE").flatMap { $0.isEmpty ? nil : $0 },
            allowsInsecureHTTP: value("SYNCKIT_ALLOW_INSECURE_HTTP") == "1")
    }

    private static let setting = Mutex(TransportSecurity.fromEnvironment())

    /// The process's setting, used by every request and push socket.
    public static var current: TransportSecurity {
        get { setting.withLock { $0 } }
        set { setting.withLock { $0 = newValue } }
    }
}
