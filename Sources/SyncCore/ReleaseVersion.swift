/// A release's version, `MAJOR.MINOR.PATCH` as semantic versioning writes it, compared part by part.
///
/// The server reports its own at `GET /v1/health`; a client compares it with the oldest one that
/// has what the client needs (see `ServerRequirement` in SyncClient).
public struct ReleaseVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int

    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// Reads `1.2.3`; a pre-release or build suffix (`1.2.3-beta.1`, `1.2.3+abc`) is ignored, and a
    /// missing minor or patch part is 0. Nil for anything else, such as an empty text or `v1.x`.
    public init?(_ text: String) {
        let core = text.prefix { $0 != "-" && $0 != "+" }
        let parts = core.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var numbers: [Int] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 9, part.allSatisfy(\.isASCII), let number = Int(part), number >= 0
            else { return nil }
            numbers.append(number)
        }
        while numbers.count < 3 { numbers.append(0) }
        self.init(numbers[0], numbers[1], numbers[2])
    }

    public var description: String { "\(major).\(minor).\(patch)" }

    public static func < (lhs: ReleaseVersion, rhs: ReleaseVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }
}

/// This project's release: one version for the server, the engine and the contacts app, written here
/// and nowhere else (the executables' `--version`, `GET /v1/health`, the packages and CHANGELOG.md's
/// headings follow it).
public enum SyncRelease {
    public static let version = ReleaseVersion(0, 3, 0)
}
