import Foundation

/// Where tests put their files: a unique path under the system's temporary directory, and the
/// clean-ups, written once for every test target.
public enum TemporaryFiles {
    /// A path no file has yet: `<tmp>/<prefix>-<UUID>`, with `.<extension>` when given.
    public static func path(_ prefix: String, extension: String? = nil) -> String {
        let name = "\(prefix)-\(UUID().uuidString)" + (`extension`.map { ".\($0)" } ?? "")
        return FileManager.default.temporaryDirectory.appendingPathComponent(name).path
    }

    /// A new directory at ``path(_:extension:)``, made 0700.
    public static func directory(_ prefix: String) throws -> String {
        let path = path(prefix)
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return path
    }

    /// Removes a SQLite file with its write-ahead log, shared memory and the server's assets directory
    /// beside it.
    public static func removeSQLite(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-assets"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// A new directory (0700), removed after `body`; its path.
public func withTemporaryDirectory<T>(_ prefix: String = "sync-tests", _ body: (String) async throws -> T)
    async throws -> T
{
    let path = try TemporaryFiles.directory(prefix)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}
