import Foundation
import Testing
import VCard

@Suite("Assets/sample-contacts.vcf")
struct SampleFileTests {
    private static let url = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Assets/sample-contacts.vcf")

    @Test("the sample file imports with no problems and at least 30 cards")
    func importsCleanly() throws {
        let result = VCardParser.parse(try Data(contentsOf: Self.url))
        #expect(result.problems == [])
        #expect(result.cards.count >= 30)
        #expect(result.cards.allSatisfy { $0.first("FN") != nil })
        #expect(Set(result.cards.map(\.version)) == [.v3, .v4])
    }

    @Test("the sample file has folded lines, many scripts, groups and X- properties")
    func sampleIsVaried() throws {
        let text = try String(contentsOf: Self.url, encoding: .utf8)
        #expect(text.contains("\r\n "))
        let cards = VCardParser.parse(text).cards
        let names = cards.compactMap { $0.first("FN")?.text }
        for name in ["Zoë Ångström", "张伟", "Nguyễn Văn An", "José Ñúñez", "Мария Иванова"] {
            #expect(names.contains(name))
        }
        #expect(cards.contains { $0.properties.contains { $0.group != nil } })
        #expect(cards.contains { $0.properties.contains { $0.name.hasPrefix("X-") } })
        #expect(cards.contains { $0.all("EMAIL").count >= 2 && $0.all("TEL").count >= 2 })
    }

    @Test("the sample uses only example domains and 555 phone numbers")
    func sampleUsesReservedData() throws {
        let cards = VCardParser.parse(try Data(contentsOf: Self.url)).cards
        for property in cards.flatMap(\.properties) where property.name == "EMAIL" {
            let domain = property.text.split(separator: "@").last.map(String.init) ?? ""
            #expect(["example.org", "example.com", "example.net"].contains(domain), "\(property.text)")
        }
        for property in cards.flatMap(\.properties) where property.name == "TEL" {
            #expect(property.text.contains("555"), "\(property.text)")
        }
    }

    @Test("parse → serialize → parse of the sample gives the same cards and the same text")
    func sampleIsStable() throws {
        let first = VCardParser.parse(try Data(contentsOf: Self.url))
        let written = VCardSerializer.serialize(first.cards)
        let second = VCardParser.parse(written)
        #expect(second.problems == [])
        #expect(second.cards == first.cards)
        #expect(VCardSerializer.serialize(second.cards) == written)
    }
}
