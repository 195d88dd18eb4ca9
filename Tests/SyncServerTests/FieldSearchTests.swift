import Foundation
import SyncTesting
import Testing

@testable import SyncServer

/// ``FieldCoding/contains(_:_:)`` finds the markers of assets and of deleteSelf references wherever they are in a
/// record's stored fields, sixteen places at a time: the same answers as comparing at every place.
@Suite("Stored fields: searching for a marker")
struct FieldSearchTests {
    private static let markers = [
        Array(#""type":"asset""#.utf8), Array(#""action":"deleteSelf""#.utf8), Array("ab".utf8), Array("x".utf8),
    ]

    /// Compares at every place, one place at a time.
    private static func everyPlace(_ data: [UInt8], _ pattern: [UInt8]) -> Bool {
        guard data.count >= pattern.count else { return false }
        return (0...(data.count - pattern.count)).contains { data[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }

    @Test("a marker at every place of fields of every length up to 80 bytes is found, and nowhere else")
    func everyPlaceAndLength() {
        for pattern in Self.markers {
            for length in 0...80 {
                // Filled with the marker's own second byte, so each block has candidates that are not it.
                let filler = [UInt8](repeating: pattern.count > 1 ? pattern[1] : UInt8(ascii: "y"), count: length)
                #expect(!FieldCoding.contains(Data(filler), pattern), "\(length) bytes without the marker")
                guard length >= pattern.count else { continue }
                for place in 0...(length - pattern.count) {
                    var bytes = filler
                    bytes.replaceSubrange(place..<(place + pattern.count), with: pattern)
                    #expect(
                        FieldCoding.contains(Data(bytes), pattern),
                        "marker \(String(decoding: pattern, as: UTF8.self)) at \(place) of \(length) bytes")
                    // Cut one byte short: the marker is not whole.
                    #expect(
                        !FieldCoding.contains(Data(bytes[..<(place + pattern.count - 1)]), pattern),
                        "marker cut short at \(place) of \(length) bytes")
                }
            }
        }
    }

    @Test("random fields, with and without a marker, and slices of them, answer as a comparison at every place does")
    func randomFields() {
        var random = SplitMix64(seed: 66)
        // Few distinct bytes, so near-misses (the two bytes compared first in place, the rest not) are common.
        let alphabet = Array(#""typeasctiondlS:{}"#.utf8)
        for round in 0..<2_000 {
            let pattern = Self.markers[round % Self.markers.count]
            var bytes = (0..<Int.random(in: 0...300, using: &random)).map { _ in alphabet.randomElement(using: &random)!
            }
            if round % 3 == 0, bytes.count >= pattern.count {
                let place = Int.random(in: 0...(bytes.count - pattern.count), using: &random)
                bytes.replaceSubrange(place..<(place + pattern.count), with: pattern)
            }
            let start = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            let slice = Data(bytes)[start...]  // A slice whose indices do not start at 0.
            #expect(FieldCoding.contains(Data(bytes), pattern) == Self.everyPlace(bytes, pattern), "round \(round)")
            #expect(FieldCoding.contains(slice, pattern) == Self.everyPlace(Array(bytes[start...]), pattern))
        }
    }

    @Test("an empty marker is in no fields")
    func emptyMarker() {
        #expect(!FieldCoding.contains(Data("{}".utf8), []))
        #expect(!FieldCoding.contains(Data(), []))
    }
}
