import Foundation
import PackagePlugin

/// Writes `BuildCommit.swift` for the target it is applied to: the commit the sources were built
/// from, when they are a git checkout (with `-modified` when tracked files differ from it), or nil
/// (a source tarball, or no git). It runs before every build and rewrites the file only when its
/// text changes, so an unchanged checkout rebuilds nothing.
@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        return [
            .prebuildCommand(
                displayName: "Recording the commit of \(target.name)",
                executable: URL(filePath: "/bin/sh"),
                arguments: ["-c", Self.script, "build-commit", context.package.directoryURL.path, output.path],
                outputFilesDirectory: output)
        ]
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
