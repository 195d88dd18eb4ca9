import ContactsModel
import Foundation
import SyncCore

/// Every contact of a store in list order (sort key, then ID), as little as a list needs: the ID, the name
/// to show, the sort key (what a search by name looks through, and what finds a contact's place), the book
/// and whether there is a photo. Packed column by column, the texts in one buffer each: about 60 bytes a
/// contact (about 60 MB at a million), where a value per contact with its own strings took several hundred. The
/// other fields stay in the store, which searches them (``ContactsReader/forEachMatch(of:in:isCancelled:_:)``).
public struct ContactListing: Sendable {
    public private(set) var ids: [UUID] = []
    private var names = PackedTexts()
    private var keys = PackedTexts()
    /// Each contact's book, as a place in ``books``.
    private var bookIndexes: [UInt32] = []
    /// The books contacts are in, each once.
    public private(set) var books: [RecordZone.ID] = []
    /// Where each book is in ``books``.
    private var bookPlaces: [RecordZone.ID: UInt32] = [:]
    private var photos: [Bool] = []

    public init() {}

    /// An empty listing with room for `count` contacts whose sort keys take `keyBytes` in all: a list grown
    /// one contact at a time would keep up to twice the room it needs (arrays double as they grow), and at a
    /// million contacts that is tens of MB.
    public init(reservingCapacity count: Int, keyBytes: Int) {
        ids.reserveCapacity(count)
        names.reserveCapacity(count, bytes: keyBytes + keyBytes / 8)
        keys.reserveCapacity(count, bytes: keyBytes)
        bookIndexes.reserveCapacity(count)
        photos.reserveCapacity(count)
    }

    public var count: Int { ids.count }

    public func name(at index: Int) -> String { names[index] }
    /// The sort key (``ContactsModel/Contact/sortKey(_:)``) of the contact at `index`.
    public func sortKey(at index: Int) -> String { keys[index] }
    public func book(at index: Int) -> RecordZone.ID { books[Int(bookIndexes[index])] }
    public func hasPhoto(at index: Int) -> Bool { photos[index] }

    /// The places of the contacts in `book`, in list order.
    public func indices(inBook book: RecordZone.ID) -> [Int] {
        guard let wanted = bookPlaces[book] else { return [] }
        return bookIndexes.indices.filter { bookIndexes[$0] == wanted }
    }

    /// Hands `body` the packed sort keys and where each begins (one more than the contacts, for the end of
    /// the last), for a search that runs through them all.
    public func withSortKeys<Result>(
        _ body: (_ bytes: UnsafeBufferPointer<UInt8>, _ starts: UnsafeBufferPointer<UInt32>) throws -> Result
    ) rethrows -> Result {
        try keys.withBytes(body)
    }

    /// Adds a contact after the last; the caller keeps the list order.
    public mutating func append(
        id: UUID, name: some Collection<UInt8>, sortKey: some Collection<UInt8>, book: RecordZone.ID, hasPhoto: Bool
    ) {
        ids.append(id)
        names.append(name)
        keys.append(sortKey)
        photos.append(hasPhoto)
        if let place = bookPlaces[book] {
            bookIndexes.append(place)
        } else {
            let place = UInt32(books.count)
            books.append(book)
            bookPlaces[book] = place
            bookIndexes.append(place)
        }
    }

    /// Where the contact `id` with sort key `sortKey` is, found by halving (the list is in that order);
    /// nil when it is not there.
    public func index(of id: UUID, sortKey: UnsafeBufferPointer<UInt8>) -> Int? {
        var low = 0
        var high = count
        return keys.withBytes { bytes, starts in
            while low < high {
                let middle = (low + high) / 2
                let key = UnsafeBufferPointer(rebasing: bytes[Int(starts[middle])..<Int(starts[middle + 1])])
                let order = Self.order(key, ids[middle], sortKey, id)
                if order == 0 { return middle }
                if order < 0 { low = middle + 1 } else { high = middle }
            }
            return nil
        }
    }

    /// How the contact at `i` in `a` and the one at `j` in `b` are ordered in the list (sort key, then ID):
    /// negative when the first comes first, 0 when they are the same contact under the same sort key.
    public static func order(_ a: ContactListing, _ i: Int, _ b: ContactListing, _ j: Int) -> Int {
        a.keys.withBytes { aBytes, aStarts in
            b.keys.withBytes { bBytes, bStarts in
                order(
                    UnsafeBufferPointer(rebasing: aBytes[Int(aStarts[i])..<Int(aStarts[i + 1])]), a.ids[i],
                    UnsafeBufferPointer(rebasing: bBytes[Int(bStarts[j])..<Int(bStarts[j + 1])]), b.ids[j])
            }
        }
    }

    /// The store's order (`ORDER BY sortKey, id`): the sort keys as SQLite orders texts, then the IDs' bytes.
    private static func order(
        _ aKey: UnsafeBufferPointer<UInt8>, _ aID: UUID, _ bKey: UnsafeBufferPointer<UInt8>, _ bID: UUID
    ) -> Int {
        let order = compare(aKey, bKey)
        return order != 0 ? order : compare(bytes(of: aID), bytes(of: bID))
    }

    /// The UUID's 16 bytes, which the store orders contacts of one sort key by.
    private static func bytes(of id: UUID) -> (UInt64, UInt64) {
        withUnsafeBytes(of: id.uuid) {
            (
                $0.loadUnaligned(as: UInt64.self).bigEndian,
                $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).bigEndian
            )
        }
    }

    private static func compare(_ a: (UInt64, UInt64), _ b: (UInt64, UInt64)) -> Int {
        a == b ? 0 : a < b ? -1 : 1
    }

    /// How SQLite orders two texts: byte by byte, a prefix first.
    private static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let x = a.baseAddress, let y = b.baseAddress {
            let order = memcmp(x, y, common)
            if order != 0 { return order < 0 ? -1 : 1 }
        }
        return a.count == b.count ? 0 : a.count < b.count ? -1 : 1
    }
}

/// Texts one after another in one buffer, each found by where it starts.
struct PackedTexts: Sendable {
    private var bytes: [UInt8] = []
    /// Where each text starts, and one more for the end of the last.
    private var starts: [UInt32] = [0]

    subscript(index: Int) -> String {
        bytes.withUnsafeBufferPointer {
            String(decoding: $0[Int(starts[index])..<Int(starts[index + 1])], as: UTF8.self)
        }
    }

    mutating func reserveCapacity(_ count: Int, bytes: Int) {
        self.bytes.reserveCapacity(bytes)
        starts.reserveCapacity(count + 1)
    }

    mutating func append(_ text: some Collection<UInt8>) {
        bytes.append(contentsOf: text)
        // 4 GB of names is 250 million contacts: past it, a stop rather than texts that overlap.
        starts.append(UInt32(bytes.count))
    }

    func withBytes<Result>(
        _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt32>) throws -> Result
    ) rethrows -> Result {
        try bytes.withUnsafeBufferPointer { bytes in try starts.withUnsafeBufferPointer { try body(bytes, $0) } }
    }
}
