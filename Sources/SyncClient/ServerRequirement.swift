import Foundation
import SyncCore

/// The oldest server release that has what an app needs, and how to say so when the server is older.
///
/// ```swift
/// let needs = ServerRequirement(minimumVersion: ReleaseVersion(0, 3, 0), features: "photos")
/// if let warning = try await needs.warning(forServerAt: url) { show(warning) }
/// ```
public struct ServerRequirement: Sendable {
    /// The oldest server version with every route the app uses.
    public var minimumVersion: ReleaseVersion
    /// What the app would miss on an older server, in its users' words ("contact photos").
    public var features: String

    public init(minimumVersion: ReleaseVersion, features: String) {
        self.minimumVersion = minimumVersion
        self.features = features
    }

    /// Asks the server its version (`GET /v1/health`): a warning when it is older than
    /// ``minimumVersion``, or says a version that does not read as one; nil when it is new enough.
    /// Throws when the server does not answer within `timeout`: by default as long as any request of a
    /// sync waits, so that a busy server that answers the sync answers this too.
    public func warning(forServerAt serverURL: URL, timeout: Duration = .seconds(60)) async throws -> String? {
        let health = try await AccountClient(serverURL: serverURL).health(timeout: timeout)
        return warning(serverURL: serverURL, reportedVersion: health.version)
    }

    /// The warning for a server at `serverURL` that reports `reportedVersion`; nil when it is new enough.
    public func warning(serverURL: URL, reportedVersion: String) -> String? {
        if let version = ReleaseVersion(reportedVersion), version >= minimumVersion { return nil }
        let runs =
            ReleaseVersion(reportedVersion).map { "runs sync-server \($0)" }
            ?? "reports a version that is not one (\(String(reportedVersion.prefix(40)).debugDescription))"
        return
            "the server at \(serverURL.absoluteString) \(runs); \(features) need sync-server \(minimumVersion) or newer, and fail until it is upgraded: ask whoever runs it to upgrade it"
    }
}
