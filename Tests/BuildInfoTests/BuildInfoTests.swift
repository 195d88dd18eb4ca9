import BuildInfo
import Foundation
import SyncCore
import Testing

/// What `--version` says about a build (``BuildInfo``); `VersionCommandTests` checks it through the programs.
@Suite("The build's version line and commit")
struct BuildInfoTests {
    /// The package's directory: this file is in Tests/BuildInfoTests.
    static let packageDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test("the line names the program, the release and, when built from git, the commit")
    func versionLine() {
        let line = BuildInfo.versionLine(of: "contacts")
        guard let commit = BuildInfo.commit else {
            #expect(line == "contacts \(SyncRelease.version)")
            return
        }
        #expect(line == "contacts \(SyncRelease.version) (commit \(commit))")
        #expect(commit.wholeMatch(of: /[0-9a-f]{12}(-modified)?/) != nil, "\(commit)")
    }

    @Test("built from a git checkout, the commit is one of its commits; built without git, there is none")
    func commitOfTheCheckout() throws {
        let isCheckout = FileManager.default.fileExists(
            atPath: Self.packageDirectory.appendingPathComponent(".git").path)
        guard isCheckout else {
            #expect(BuildInfo.commit == nil)
            return
        }
        let commit = try #require(BuildInfo.commit, "built from a git checkout, yet no commit")
        let git = Process()
        git.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        git.arguments = ["git", "-C", Self.packageDirectory.path, "cat-file", "-e", "\(commit.prefix(12))^{commit}"]
        try git.run()
        git.waitUntilExit()
        #expect(git.terminationStatus == 0, "git does not know commit \(commit)")
    }
}
