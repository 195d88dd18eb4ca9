import Foundation
import SyncCore

/// Where a ``Container`` made with `Container(identifier:)` finds its server and account.
///
/// From the environment, when `SYNCKIT_SERVER` is set:
///
/// | variable | meaning |
/// |---|---|
/// | `SYNCKIT_SERVER` | the server's URL, such as `http://127.0.0.1:8080` |
/// | `SYNCKIT_USERNAME`, `SYNCKIT_PASSWORD` | the account to sign in with |
/// | `SYNCKIT_SIGN_UP` | `1` to create the account on first use if it does not exist |
/// | `SYNCKIT_PASSPHRASE` | the passphrase that opens the account's `encryptedValues` |
///
/// Otherwise from the configuration file `$SYNCKIT_CONFIG`, or
/// `$XDG_CONFIG_HOME/synckit/containers.json` (`~/.config/synckit/containers.json`): an object
/// keyed by container identifier (or `"*"` for any), each with `server`, `username`, `password`,
/// and optionally `signUp` and `passphrase`. The file holds passwords, so it must not be readable
/// by others (mode 0600).
public struct ContainerConfiguration: Sendable, Hashable, Codable {
    public var serverURL: URL
    public var username: String
    public var password: String
    /// Create the account on first use if the server does not know it.
    public var signUp: Bool
    /// The passphrase that opens the account's encrypted values, if any.
    public var passphrase: String?

    public init(serverURL: URL, username: String, password: String, signUp: Bool = false, passphrase: String? = nil) {
        self.serverURL = serverURL
        self.username = username
        self.password = password
        self.signUp = signUp
        self.passphrase = passphrase
    }

    private enum CodingKeys: String, CodingKey {
        case serverURL = "server"
        case username, password, signUp, passphrase
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        serverURL = try container.decode(URL.self, forKey: .serverURL)
        username = try container.decode(String.self, forKey: .username)
        password = try container.decode(String.self, forKey: .password)
        signUp = try container.decodeIfPresent(Bool.self, forKey: .signUp) ?? false
        passphrase = try container.decodeIfPresent(String.self, forKey: .passphrase)
    }

    /// The configuration for `identifier`: from the environment, else from the configuration file.
    /// Throws, saying what to set, when neither has one or what is there is wrong.
    public static func load(
        identifier: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ContainerConfiguration {
        if let server = environment["SYNCKIT_SERVER"] {
            guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https" else {
                throw SyncError(
                    .invalidArguments,
                    "SYNCKIT_SERVER is \(server), not an http or https URL; set it to the server's URL")
            }
            guard let username = environment["SYNCKIT_USERNAME"], let password = environment["SYNCKIT_PASSWORD"] else {
                throw SyncError(
                    .notAuthenticated,
                    "SYNCKIT_SERVER is set but SYNCKIT_USERNAME or SYNCKIT_PASSWORD is not; set both to the account to sign in with"
                )
            }
            return ContainerConfiguration(
                serverURL: url, username: username, password: password, signUp: environment["SYNCKIT_SIGN_UP"] == "1",
                passphrase: environment["SYNCKIT_PASSPHRASE"])
        }
        let file = configurationFile(environment: environment)
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw SyncError(
                .notAuthenticated,
                "container \(identifier) has no server: set SYNCKIT_SERVER, SYNCKIT_USERNAME and SYNCKIT_PASSWORD, or write \(file.path)"
            )
        }
        let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
        if let mode = (attributes?[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0 {
            throw SyncError(
                .notAuthenticated,
                "\(file.path) holds passwords but others can read it; run chmod 600 \(file.path)")
        }
        let configurations: [String: ContainerConfiguration]
        do {
            configurations = try JSONDecoder().decode(
                [String: ContainerConfiguration].self, from: Data(contentsOf: file))
        } catch {
            throw SyncError(
                .invalidArguments,
                "\(file.path) does not read as container configurations (\(error)); see ContainerConfiguration for its format"
            )
        }
        guard let configuration = configurations[identifier] ?? configurations["*"] else {
            throw SyncError(
                .notAuthenticated, "\(file.path) has no entry for container \(identifier) (nor \"*\"); add one")
        }
        return configuration
    }

    /// The configuration file's path.
    public static func configurationFile(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        if let path = environment["SYNCKIT_CONFIG"] { return URL(fileURLWithPath: path) }
        let base =
            environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".config")
        return base.appendingPathComponent("synckit").appendingPathComponent("containers.json")
    }
}
