import Foundation

extension ContactStore {
    /// Calls `body` with `items` a chunk at a time, each small enough for one statement's arguments (below
    /// SQLite's limit), and the chunk's placeholders for an `IN (…)`: "?,?,…".
    static func inChunks<Item>(_ items: [Item], _ body: (ArraySlice<Item>, _ marks: String) throws -> Void) rethrows {
        for start in stride(from: 0, to: items.count, by: 500) {
            let chunk = items[start..<min(start + 500, items.count)]
            try body(chunk, Array(repeating: "?", count: chunk.count).joined(separator: ","))
        }
    }
}
