import ContactsModel
import ContactsStore

/// The search the list answers at once: through the names' sort keys it holds (``ContactsStore/ContactListing``),
/// one contiguous buffer searched byte by byte with ``ContactsModel/ContactSearch/nameRank(bytes:from:to:)``:
/// at a million contacts a keystroke scans about 15 MB, or only the last keystroke's matches when it narrows
/// them. Matches in the other fields come after, from the store (``EveryFieldSearch``).
enum NameSearch {
    /// The positions of the contacts whose names `search` finds, the best matches first, then in list order;
    /// only among `candidates` when given (a search that narrows the last one looks only through its matches).
    static func matches(_ search: ContactSearch, in rows: ContactListing, among candidates: [Int]? = nil) -> [Int] {
        rows.withSortKeys { bytes, starts in
            var ranked = RankedPositions()
            func look(at index: Int) {
                guard let rank = search.nameRank(bytes: bytes, from: Int(starts[index]), to: Int(starts[index + 1]))
                else { return }
                ranked.add(index, rank: rank)
            }
            if let candidates {
                // In list order, as a whole search would meet them (the candidates come best first).
                if candidates.count < rows.count / 16 {
                    for index in candidates.sorted() { look(at: index) }
                } else {
                    var isCandidate = [Bool](repeating: false, count: rows.count)
                    for index in candidates { isCandidate[index] = true }
                    for index in 0..<rows.count where isCandidate[index] { look(at: index) }
                }
            } else {
                for index in 0..<rows.count { look(at: index) }
            }
            return ranked.positions(sorting: false)
        }
    }
}

/// Positions gathered by rank: one list per rank, so the best first is the lists one after the other, with
/// no sort of the whole (a first letter matches nearly every contact, and sorting a million of them took
/// longer than finding them).
struct RankedPositions {
    private var byRank: [[Int]] = []

    mutating func add(_ position: Int, rank: Int) {
        while byRank.count <= rank { byRank.append([]) }
        byRank[rank].append(position)
    }

    /// The best first, each rank in list order: as added, or `sorting` each rank when they came in another order.
    func positions(sorting: Bool) -> [Int] {
        guard sorting else { return Array(byRank.joined()) }
        return Array(byRank.map { $0.sorted() }.joined())
    }
}
