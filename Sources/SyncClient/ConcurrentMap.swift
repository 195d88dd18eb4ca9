import Foundation

/// Sealing and opening a page of records is pure work once the zone's key is at hand, and the
/// machine's cores are otherwise idle while the client works (the server waits for its request).
package enum ConcurrentMap {
    /// Below this many items per core, one task does it all.
    static let minimumPerTask = 64

    /// `transform` applied to every item, results in order, on up to as many tasks as there are
    /// cores. The first item goes alone, so that a zone key that has to be fetched or made is fetched
    /// or made once. The first error thrown is thrown.
    package static func map<Item: Sendable, Result: Sendable>(
        _ items: [Item], _ transform: @escaping @Sendable (Item) async throws -> Result
    ) async throws -> [Result] {
        guard let first = items.first else { return [] }
        var results = [try await transform(first)]
        results.reserveCapacity(items.count)
        let rest = items.dropFirst()
        let tasks = min(ProcessInfo.processInfo.activeProcessorCount, rest.count / minimumPerTask)
        guard tasks > 1 else {
            for item in rest { results.append(try await transform(item)) }
            return results
        }
        let size = (rest.count + tasks - 1) / tasks
        let chunks = stride(from: rest.startIndex, to: rest.endIndex, by: size).map {
            Array(rest[$0..<min($0 + size, rest.endIndex)])
        }
        let mapped = try await withThrowingTaskGroup(of: (Int, [Result]).self) { group in
            for (index, chunk) in chunks.enumerated() {
                group.addTask {
                    var out: [Result] = []
                    out.reserveCapacity(chunk.count)
                    for item in chunk { out.append(try await transform(item)) }
                    return (index, out)
                }
            }
            var byChunk = [[Result]](repeating: [], count: chunks.count)
            for try await (index, out) in group { byChunk[index] = out }
            return byChunk
        }
        for chunk in mapped { results += chunk }
        return results
    }
}
