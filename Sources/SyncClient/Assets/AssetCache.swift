import Foundation
import Synchronization

/// This device's copies of downloaded assets, decrypted, by asset ID (an asset never changes, so a copy
/// never goes stale), within a size limit: past it, the copies used least recently go first.
///
/// The directory is made 0700 and each file 0600: the copies are plaintext.
public final class AssetCache: Sendable, Hashable {
    public let directory: URL
    /// The most bytes the copies may take; a download that goes past it evicts the oldest others.
    public let limitBytes: Int64

    public init(directory: URL, limitBytes: Int64 = 1024 * 1024 * 1024) {
        self.directory = directory
        self.limitBytes = limitBytes
        Self.made.withLock { $0.append(self) }
    }

    /// Every cache made in this process: ``Asset/fileURL`` finds a download in whichever holds it.
    private static let made = Mutex<[AssetCache]>([])

    /// The copy of `assetID` in any cache of this process.
    static func anyFile(for assetID: String) -> URL? {
        for cache in made.withLock({ $0 }) {
            if let file = cache.file(for: assetID) { return file }
        }
        return nil
    }

    public static func == (lhs: AssetCache, rhs: AssetCache) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    private static let shared = Mutex<AssetCache>(
        AssetCache(directory: defaultDirectory(ProcessInfo.processInfo.environment)))

    /// The cache ``Asset/fileURL`` looks in and a ``Database`` downloads to unless told otherwise:
    /// `$SYNCKIT_ASSET_CACHE`, else `$XDG_CACHE_HOME/synckit/assets` (`~/.cache/synckit/assets`).
    public static var `default`: AssetCache {
        get { shared.withLock { $0 } }
        set { shared.withLock { $0 = newValue } }
    }

    static func defaultDirectory(_ environment: [String: String]) -> URL {
        if let path = environment["SYNCKIT_ASSET_CACHE"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let cache =
            environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return cache.appendingPathComponent("synckit/assets")
    }

    /// The copy of asset `assetID`, if this device has one; marks it used now.
    public func file(for assetID: String) -> URL? {
        let file = directory.appendingPathComponent(assetID)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: file.path)
        return file
    }

    /// A new file to download into (0600), in the cache's directory so that ``keep(_:as:)`` renames it.
    func temporaryFile() throws -> (URL, FileHandle) {
        try makeDirectory()
        let file = directory.appendingPathComponent(".download-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forWritingAtPath: file.path)
        else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
        return (file, handle)
    }

    /// Makes a finished download the copy of `assetID`, then evicts copies past the limit.
    func keep(_ temporary: URL, as assetID: String) throws -> URL {
        let file = directory.appendingPathComponent(assetID)
        if rename(temporary.path, file.path) != 0 {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
        evict(keeping: assetID)
        return file
    }

    private func makeDirectory() throws {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Removes the copies used least recently until the rest fit the limit (never `kept`).
    private func evict(keeping kept: String) {
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        guard
            let files = try? FileManager.default.contentsOfDirectory(
                at: directory, includingPropertiesForKeys: keys)
        else { return }
        var entries: [(url: URL, size: Int64, used: Date)] = files.compactMap { url in
            guard !url.lastPathComponent.hasPrefix("."), let values = try? url.resourceValues(forKeys: Set(keys))
            else { return nil }
            return (url, Int64(values.fileSize ?? 0), values.contentModificationDate ?? .distantPast)
        }
        var total = entries.reduce(0) { $0 + $1.size }
        guard total > limitBytes else { return }
        entries.sort { $0.used < $1.used }
        for entry in entries where total > limitBytes && entry.url.lastPathComponent != kept {
            try? FileManager.default.removeItem(at: entry.url)
            total -= entry.size
        }
    }
}
