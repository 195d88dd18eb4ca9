import Foundation

/// The last events of the engine and the app, oldest first, for the event log pane. A ring buffer: the
/// oldest entry makes way once ``capacity`` is reached, so a long session uses bounded memory.
public struct EventLog: Sendable, Equatable {
    /// One line of the log.
    public struct Entry: Sendable, Equatable {
        public var date: Date
        /// The text as received; the renderer makes it safe to show.
        public var text: String
        /// Drawn in the error colour.
        public var isError: Bool
        /// How many times in a row this text was logged; the entry keeps the latest date.
        public var repeats = 1

        public init(date: Date, text: String, isError: Bool = false) {
            self.date = date
            self.text = text
            self.isError = isError
        }
    }

    /// How many entries are kept.
    public let capacity: Int
    private var storage: [Entry] = []
    /// Where the oldest entry is, once the buffer is full.
    private var head = 0

    /// An empty log keeping at most `capacity` entries.
    public init(capacity: Int = 200) {
        self.capacity = max(1, capacity)
    }

    /// Adds an entry, dropping the oldest if full; the same text as the last entry only counts a repeat, so
    /// that a failure retried every few seconds takes one line.
    public mutating func append(_ entry: Entry) {
        let last = storage.isEmpty ? nil : (head + storage.count - 1) % storage.count
        if let last, storage[last].text == entry.text, storage[last].isError == entry.isError {
            storage[last].repeats += 1
            storage[last].date = entry.date
            return
        }
        if storage.count < capacity {
            storage.append(entry)
        } else {
            storage[head] = entry
            head = (head + 1) % capacity
        }
    }

    /// How many entries there are.
    public var count: Int { storage.count }

    /// The last `count` entries, oldest first.
    public func last(_ count: Int) -> [Entry] {
        let wanted = max(0, min(count, storage.count))
        return (storage.count - wanted..<storage.count).map { storage[(head + $0) % storage.count] }
    }

    /// Every entry, oldest first.
    public var entries: [Entry] { last(storage.count) }
}
