import Foundation
import NIOCore
import SyncCore

/// Where the server keeps assets (CloudKit's `CKAsset`): uploads, their bytes, and the record that
/// names each.
///
/// An upload is made with its size, which counts in its uploader's storage from then on. It takes its
/// bytes in order, a request at a time, each from where the upload stands, so that a lost connection
/// resumes where it stopped; it is complete when it holds them all. A complete asset's bytes are read
/// back in ranges, streamed: neither side holds a whole asset. An upload no record names expires; an
/// asset whose record is gone, or names another asset now, is collected after the tombstone retention.
/// With SQLite the bytes are files beside the database; with PostgreSQL, chunks in it, so that every
/// instance serves every asset.
public protocol AssetStore: Sendable {
    /// Makes an upload of `size` bytes for `uploader`, counted in its storage at once.
    /// - Throws: `quotaExceeded` when the account's storage cannot hold it.
    func createAssetUpload(id: String, uploader: String, size: Int64, now: Date) async throws

    /// The asset or upload `id`, or nil.
    func asset(id: String) async throws -> StoredAsset?

    /// Appends `bytes` to upload `id`, which must stand at `offset`; returns the upload as it stands
    /// after. What arrived before a body ended early is kept, so that the upload resumes from there.
    /// - Throws: `unknownItem` for no such upload, `constraintViolation` when it does not stand at
    ///   `offset` (complete, or another request sends its bytes now), `invalidArguments` for more bytes
    ///   than it has left (those that fit are kept).
    func appendToAsset<Bytes: AsyncSequence>(id: String, at offset: Int64, _ bytes: Bytes, now: Date) async throws
        -> StoredAsset where Bytes.Element == ByteBuffer

    /// Hands the bytes `range` of the complete asset `id` to `write`, a chunk at a time, in order.
    func readAsset(id: String, range: Range<Int64>, into write: (ByteBuffer) async throws -> Void) async throws

    /// Makes the record at `place` the one that names the assets `ids`, and marks every other asset that
    /// record named as detached since `now` (a record's save names its assets anew each time).
    func attachAssets(_ ids: [String], to place: AssetPlace, now: Date) async throws

    /// Marks assets whose record is gone (removed, or a tombstone) as detached, then removes assets
    /// detached before `detachedBefore` and uploads no record names made before `uploadsBefore`, with
    /// their bytes; their size no longer counts in their uploaders' storage. Returns what it removed.
    @discardableResult
    func collectAssets(detachedBefore: Date, uploadsBefore: Date, now: Date) async throws -> AssetCollection
}

/// An upload or asset as stored.
public struct StoredAsset: Sendable, Hashable {
    public var id: String
    /// The account that uploaded it; only it may name the asset in a record first.
    public var uploader: String
    public var size: Int64
    /// How many of its bytes the server holds.
    public var received: Int64
    public var createdAt: Date
    /// The record that names it, once one does.
    public var record: AssetPlace?
    /// When its record stopped naming it, or went.
    public var detachedAt: Date?

    public var isComplete: Bool { received == size }

    public init(
        id: String, uploader: String, size: Int64, received: Int64, createdAt: Date, record: AssetPlace? = nil,
        detachedAt: Date? = nil
    ) {
        self.id = id
        self.uploader = uploader
        self.size = size
        self.received = received
        self.createdAt = createdAt
        self.record = record
        self.detachedAt = detachedAt
    }
}

/// The record an asset belongs to: its owner's zone and its name.
public struct AssetPlace: Sendable, Hashable {
    public var owner: String
    public var key: RecordKey

    public init(owner: String, key: RecordKey) {
        self.owner = owner
        self.key = key
    }
}

/// What ``AssetStore/collectAssets(detachedBefore:uploadsBefore:now:)`` removed.
public struct AssetCollection: Sendable, Hashable {
    public var assets: Int
    public var bytes: Int64

    public init(assets: Int = 0, bytes: Int64 = 0) {
        self.assets = assets
        self.bytes = bytes
    }
}
