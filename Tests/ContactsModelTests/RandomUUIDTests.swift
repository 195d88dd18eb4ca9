import ContactsModel
import Foundation
import Testing

@Suite struct RandomUUIDTests {
    @Test func randomUUIDsAreVersion4AndDistinct() {
        let ids = (0..<1000).map { _ in UUID.random() }
        #expect(Set(ids).count == 1000)
        for id in ids {
            let text = id.uuidString
            #expect(Array(text)[14] == "4", "\(text)")
            #expect("89AB".contains(Array(text)[19]), "\(text)")
        }
    }

    /// The bytes come from one buffer for the process, refilled every 256 UUIDs: UUIDs made at once on
    /// many threads, across many refills, are all different.
    @Test func uuidsMadeAtOnceOnManyThreadsAreDistinct() async {
        let ids = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<8 { group.addTask { (0..<2_000).map { _ in UUID.random() } } }
            return await group.reduce(into: [UUID]()) { $0 += $1 }
        }
        #expect(ids.count == 16_000)
        #expect(Set(ids).count == 16_000)
    }
}
