import ContactsModel
import ContactsStore

/// The contacts' search texts (``ContactsModel/Contact/searchText``: every field, folded) in one contiguous
/// UTF-8 buffer, searched byte by byte with ``ContactsModel/ContactSearch``: with 100,000 contacts a
/// keystroke scans a few MB, in a few milliseconds.
struct SearchIndex: Sendable {
    private let bytes: [UInt8]
    /// Where each text starts in ``bytes``; one more entry than texts, for the end of the last.
    private let starts: [Int]

    /// An index of `texts`, in list order.
    init(texts: some Sequence<String>) {
        var bytes: [UInt8] = []
        var starts: [Int] = [0]
        for text in texts {
            bytes.append(contentsOf: text.utf8)
            starts.append(bytes.count)
        }
        self.bytes = bytes
        self.starts = starts
    }

    /// The positions of the contacts `search` finds, the best matches first (``ContactsModel/ContactSearch/rank(bytes:from:to:bookName:)``),
    /// then in list order; only among `candidates` when given (a search that narrows the last one looks only
    /// through its matches). `bookName` names a position's book.
    func matches(_ search: ContactSearch, among candidates: [Int]? = nil, bookName: (Int) -> String?) -> [Int] {
        bytes.withUnsafeBufferPointer { bytes in
            // Rank and position in one integer, so that sorting compares integers.
            var ranked: [Int] = []
            for index in candidates ?? Array(0..<(starts.count - 1)) {
                let rank = search.rank(
                    bytes: bytes, from: starts[index], to: starts[index + 1], bookName: bookName(index))
                if let rank { ranked.append(rank << 32 | index) }
            }
            ranked.sort()
            return ranked.map { $0 & 0xFFFF_FFFF }
        }
    }
}
