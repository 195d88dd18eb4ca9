import Foundation
import Synchronization
import Testing

@testable import SyncClient

@Suite("Sealing and opening pages of records on every core")
struct ConcurrentMapTests {
    struct Refused: Error, Equatable { var item: Int }

    @Test("results come back in order, for short and long pages", arguments: [0, 1, 2, 65, 129, 1_000, 4_321])
    func inOrder(count: Int) async throws {
        let mapped = try await ConcurrentMap.map(Array(0..<count)) { $0 * 2 }
        #expect(mapped == (0..<count).map { $0 * 2 })
    }

    @Test("the first item is done before any other starts")
    func firstAlone() async throws {
        let started = Mutex<[Int]>([])
        _ = try await ConcurrentMap.map(Array(0..<1_000)) { item in
            started.withLock { $0.append(item) }
            return item
        }
        #expect(started.withLock { $0.first } == 0)
        #expect(started.withLock { Set($0) } == Set(0..<1_000))
    }

    @Test("an error from any item is thrown")
    func errors() async throws {
        await #expect(throws: Refused(item: 777)) {
            _ = try await ConcurrentMap.map(Array(0..<1_000)) { item in
                if item == 777 { throw Refused(item: item) }
                return item
            }
        }
    }
}
