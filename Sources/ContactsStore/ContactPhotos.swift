import ContactsModel
import Crypto
import Foundation
import LocalSystem
import SyncClient
import SyncCore
import Synchronization

/// The images of a device's contact photos, one file per image named by its SHA-256 (so that two
/// contacts with one image share it, and a file's name says what it must hold), in a directory beside
/// the device's store (`<device>.photos/`, 0700, files 0600). An image is here when it was imported or
/// set on this device, or downloaded; a photo synced from elsewhere is downloaded when it is asked for.
public struct ContactPhotos: Sendable {
    public let directory: URL

    /// Where downloads arrive before they are checked and kept (``keep(downloaded:for:)`` moves them):
    /// inside the directory, so that a download is renamed into place, not copied.
    public let downloads: AssetCache

    public init(directory: URL) {
        self.directory = directory
        downloads = Self.caches.withLock { caches in
            if let cache = caches[directory] { return cache }
            let cache = AssetCache(directory: directory.appendingPathComponent(".downloads"))
            caches[directory] = cache
            return cache
        }
    }

    /// One download cache per directory for the process (a cache registers itself for good).
    private static let caches = Mutex<[URL: AssetCache]>([:])

    /// The file of the image `digest`, whether or not it is here.
    public func file(for digest: String) -> URL {
        directory.appendingPathComponent(digest)
    }

    /// Whether the image is on this device.
    public func has(_ photo: ContactPhoto) -> Bool {
        FileManager.default.fileExists(atPath: file(for: photo.digest).path)
    }

    /// Keeps `image` (written to a temporary file, flushed, renamed into place) and describes it. An import
    /// keeps many without flushing each (`durable: false`), then flushes them at once (``flush()``) before
    /// the contacts that name them are committed.
    public func keep(_ image: Data, mediaType: String, durable: Bool = true) throws -> ContactPhoto {
        try keep(mediaType: mediaType, durable: durable) { handle, hash in
            hash.update(data: image)
            try handle.write(contentsOf: image)
            return Int64(image.count)
        }
    }

    /// Keeps the image in `file`, copied a piece at a time while its SHA-256 is computed (a large image
    /// is never read whole), and describes it.
    public func keep(file: URL, mediaType: String) throws -> ContactPhoto {
        let input = try FileHandle(forReadingFrom: file)
        defer { try? input.close() }
        return try keep(mediaType: mediaType) { handle, hash in
            var size: Int64 = 0
            while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
                hash.update(data: chunk)
                try handle.write(contentsOf: chunk)
                size += Int64(chunk.count)
            }
            return size
        }
    }

    /// Writes an image through `write` (which returns its size) into a new 0600 file of the directory,
    /// flushes it, and renames it to its SHA-256 unless that image is here already.
    private func keep(
        mediaType: String, durable: Bool = true, _ write: (FileHandle, inout SHA256) throws -> Int64
    ) throws -> ContactPhoto {
        try makeDirectory()
        let temporary = directory.appendingPathComponent(".new-\(UUID().uuidString)")
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forWritingAtPath: temporary.path)
        else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        var hash = SHA256()
        let size: Int64
        do {
            size = try write(handle, &hash)
            if durable { try handle.synchronize() }
            try handle.close()
        } catch {
            try? handle.close()
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        let photo = ContactPhoto(mediaType: mediaType, size: size, digest: Hexadecimal.lowercase(hash.finalize()))
        if has(photo) {
            try? FileManager.default.removeItem(at: temporary)
        } else {
            try moveIntoPlace(temporary, as: photo.digest)
            if durable { DescriptorIO.synchronizeDirectory(directory.path) }
        }
        return photo
    }

    /// Flushes every image kept without flushing, and their names, to the disk: one `syncfs` of the
    /// directory's file system, where a flush per image took most of an import's time.
    public func flush() throws {
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        if let failure = DescriptorIO.synchronizeFileSystem(holding: directory.path) {
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [
                    NSFilePathErrorKey: directory.path,
                    NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO),
                ])
        }
    }

    /// Keeps a downloaded image for `photo` when it is the image the photo names (its SHA-256 and size);
    /// returns its file. A file that is not is removed and refused.
    func keep(downloaded file: URL, for photo: ContactPhoto) throws -> URL {
        defer { try? FileManager.default.removeItem(at: file) }
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var hash = SHA256()
        var size: Int64 = 0
        while let chunk = try handle.read(upToCount: 1024 * 1024), !chunk.isEmpty {
            hash.update(data: chunk)
            size += Int64(chunk.count)
        }
        let digest = Hexadecimal.lowercase(hash.finalize())
        guard digest == photo.digest, size == photo.size else {
            throw ContactError.photoMismatch(expected: photo.digest)
        }
        if !has(photo) {
            try moveIntoPlace(file, as: digest)
            DescriptorIO.synchronizeDirectory(directory.path)
        }
        return self.file(for: digest)
    }

    private func makeDirectory() throws {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    private func moveIntoPlace(_ temporary: URL, as digest: String) throws {
        if rename(temporary.path, file(for: digest).path) != 0 {
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file(for: digest).path])
        }
    }
}
