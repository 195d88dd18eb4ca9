import SyncCore

/// What an executable says about its build: the release's version (``SyncRelease``) and, when it was
/// built from a git checkout, the commit (written at build time by the BuildCommit plugin).
public enum BuildInfo {
    /// The commit the executable was built from, `-modified` when tracked files differed from it;
    /// nil when it was built from sources without git.
    public static let commit: String? = buildCommit

    /// What `--version` prints: `contacts 0.3.0 (commit 1a2b3c4d5e6f)`.
    public static func versionLine(of program: String) -> String {
        "\(program) \(SyncRelease.version)" + (commit.map { " (commit \($0))" } ?? "")
    }
}
