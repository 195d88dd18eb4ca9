import Foundation
import PackagePlugin

/// Writes `BuildCommit.swift` for the target it is applied to: the commit the sources were built
/// from, when they are a git checkout (with `-modified` when tracked files differ from it), or nil
/// (a source tarball, or no git). It rewrites the file only when its text changes, so an unchanged
/// checkout rebuilds nothing.
///
/// A build command, not a prebuild one: SwiftPM runs prebuild commands only when it plans the build
/// again (a manifest or the set of files changed), so after a commit or an edit an incremental build
/// kept the commit of the last planned one, and `--version` named a commit it was not built from.
/// This one runs whenever git's record of HEAD or its index changes, or any of the package's source
/// files does.
@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        let file = output.appending(path: "BuildCommit.swift")
        let sources = context.package.targets.compactMap { $0 as? SourceModuleTarget }.flatMap {
            $0.sourceFiles.map(\.url)
        }
        return [
            .buildCommand(
                displayName: "Recording the commit of \(target.name)",
                executable: URL(filePath: "/bin/sh"),
                arguments: ["-c", Self.script, "build-commit", context.package.directoryURL.path, output.path],
                inputFiles: Self.gitFiles(of: context.package.directoryURL) + sources,
                outputFiles: [file])
        ]
    }

    /// The files git rewrites when HEAD moves (its log: commits, checkouts, resets) or the index
    /// changes; none outside a checkout. A worktree's `.git` is a file naming its own git directory.
    static func gitFiles(of package: URL) -> [URL] {
        let dotGit = package.appending(path: ".git")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dotGit.path, isDirectory: &isDirectory) else { return [] }
        var gitDirectory = dotGit
        if !isDirectory.boolValue {
            guard let text = try? String(contentsOf: dotGit, encoding: .utf8), text.hasPrefix("gitdir: ") else {
                return []
            }
            let path = text.dropFirst("gitdir: ".count).trimmingCharacters(in: .whitespacesAndNewlines)
            gitDirectory = path.hasPrefix("/") ? URL(filePath: path) : package.appending(path: path)
        }
        return ["HEAD", "logs/HEAD", "index"].map { gitDirectory.appending(path: $0) }.filter {
            FileManager.default.fileExists(atPath: $0.path)
        }
    }

    /// `$1` the package's directory, `$2` where the Swift file goes.
    static let script = """
        set -eu
        mkdir -p "$2"
        commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null || true)
        if [ -n "$commit" ] && [ -n "$(GIT_OPTIONAL_LOCKS=0 git -C "$1" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
            commit="$commit-modified"
        fi
        if [ -n "$commit" ]; then value="\\"$commit\\""; else value=nil; fi
        printf '/// Written by the BuildCommit plugin at build time.\\nlet buildCommit: String? = %s\\n' "$value" > "$2/BuildCommit.swift.next"
        if cmp -s "$2/BuildCommit.swift.next" "$2/BuildCommit.swift"; then
            rm "$2/BuildCommit.swift.next"
        else
            mv "$2/BuildCommit.swift.next" "$2/BuildCommit.swift"
        fi
        """
}
