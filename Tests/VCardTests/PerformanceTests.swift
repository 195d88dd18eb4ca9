import Foundation
import Testing
import VCard

@Suite("Ten thousand contacts")
struct PerformanceTests {
    @Test("10,000 generated cards serialize and parse back unchanged (times are printed)")
    func tenThousandCards() {
        var generator = CardGenerator(seed: 42)
        let cards = (0..<10_000).map { generator.typicalCard($0) }
        let clock = ContinuousClock()

        var file = ""
        let serializeTime = clock.measure { file = VCardSerializer.serialize(cards) }
        var parsed: VCardParseResult?
        let parseTime = clock.measure { parsed = VCardParser.parse(file) }
        print(
            "VCard: serialized 10,000 cards (\(file.utf8.count / 1024) KiB) in \(serializeTime), parsed in \(parseTime)"
        )

        #expect(parsed?.problems == [])
        #expect(parsed?.cards.count == cards.count)
        #expect(parsed?.cards == cards)
    }
}
