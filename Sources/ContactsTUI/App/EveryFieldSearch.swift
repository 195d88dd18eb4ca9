import ContactsModel
import ContactsStore
import SyncCore

/// A search through every field of every contact, which the list cannot answer from the names it holds:
/// the store looks through its search texts (``ContactsStore/ContactsReader/forEachMatch(of:in:isCancelled:_:)``,
/// a scan of the table, about a second at a million contacts, in steps that let the app's other reads in),
/// and each match finds its place in the list by its sort key. The app runs it in the background and hands
/// the positions to ``ContactList/showEveryField(_:generation:viewport:)``.
public struct EveryFieldSearch: Sendable {
    public let pending: ContactList.PendingSearch
    let rows: ContactListing

    /// The search `list` waits for; nil when it waits for none, or holds only its first rows (the search
    /// waits for the rest, which searches again).
    public init?(_ list: ContactList) {
        guard let pending = list.pendingSearch, list.isComplete else { return nil }
        self.pending = pending
        rows = list.rows
    }

    /// The positions in the list of the contacts the search finds, the best first, each rank in list order.
    /// A contact the list does not have (the store changed since the list was read) is left out: the list
    /// is read again, and searched again, after every change. Stops early, with nil, once `isCancelled`.
    public func run(in store: ContactsReader, isCancelled: @Sendable () -> Bool) throws -> [Int]? {
        var ranked = RankedPositions()
        try store.forEachMatch(of: pending.search, in: pending.book, isCancelled: isCancelled) { id, sortKey, rank in
            if let position = rows.index(of: id, sortKey: sortKey) { ranked.add(position, rank: rank) }
            return true
        }
        return isCancelled() ? nil : ranked.positions(sorting: true)
    }
}
