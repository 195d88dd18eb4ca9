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
            // One list of positions per rank, each in list order as the scan meets them: the best first is then
            // the lists one after the other, with no sort (a first letter matches nearly every contact, and
            // sorting a million of them took longer than finding them).
            var byRank: [[Int]] = []
            func look(at index: Int) {
                guard
                    let rank = search.rank(
                        bytes: bytes, from: starts[index], to: starts[index + 1], bookName: bookName(index))
                else { return }
                while byRank.count <= rank { byRank.append([]) }
                byRank[rank].append(index)
            }
            let count = starts.count - 1
            if let candidates {
                // In list order, as a whole search would meet them (the candidates come best first).
                if candidates.count < count / 16 {
                    for index in candidates.sorted() { look(at: index) }
                } else {
                    var isCandidate = [Bool](repeating: false, count: count)
                    for index in candidates { isCandidate[index] = true }
                    for index in 0..<count where isCandidate[index] { look(at: index) }
                }
            } else {
                for index in 0..<count { look(at: index) }
            }
            return Array(byRank.joined())
        }
    }
}
