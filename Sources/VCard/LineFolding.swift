/// Folds a content line into lines of at most 75 octets (RFC 6350 §3.2): each continuation line
/// starts with one space, so it carries at most 74 octets of content.
///
/// Folds fall between grapheme clusters, so "Zoë", "张伟" and 👩‍👩‍👧 stay whole on one line; only a
/// single cluster longer than a line is split, and then between Unicode scalars, never inside a
/// UTF-8 sequence.
enum LineFolding {
    static let maximumOctets = 75

    /// Appends `line` to `output`, folded, with a CR LF after every physical line.
    static func fold(_ line: [UInt8], into output: inout [UInt8]) {
        var start = 0
        var limit = maximumOctets
        // Grapheme boundaries as UTF-8 offsets, computed only for a long line that is not ASCII.
        var boundaries: [Int]?
        while line.count - start > limit {
            var cut = start + limit
            // Between two ASCII bytes is always a grapheme boundary (CR LF never occurs here).
            if line[cut] >= 0x80 || line[cut - 1] >= 0x80 {
                let known = boundaries ?? graphemeBoundaries(line)
                boundaries = known
                cut = boundaryCut(line, boundaries: known, after: start, atMost: cut)
            }
            output.append(contentsOf: line[start..<cut])
            output.append(contentsOf: [UInt8(ascii: "\r"), UInt8(ascii: "\n"), UInt8(ascii: " ")])
            start = cut
            limit = maximumOctets - 1
        }
        output.append(contentsOf: line[start...])
        output.append(contentsOf: [UInt8(ascii: "\r"), UInt8(ascii: "\n")])
    }

    /// The last grapheme boundary after `start` and at most `limit`; if a single grapheme fills
    /// the whole span, the last Unicode scalar boundary instead.
    private static func boundaryCut(_ line: [UInt8], boundaries: [Int], after start: Int, atMost limit: Int) -> Int {
        // The first boundary above `limit`; the one before it is the candidate.
        var low = 0
        var high = boundaries.count
        while low < high {
            let middle = (low + high) / 2
            if boundaries[middle] <= limit { low = middle + 1 } else { high = middle }
        }
        if low > 0 && boundaries[low - 1] > start { return boundaries[low - 1] }
        var cut = limit
        while line[cut] & 0xC0 == 0x80 { cut -= 1 }
        return cut
    }

    private static func graphemeBoundaries(_ line: [UInt8]) -> [Int] {
        var boundaries: [Int] = []
        var offset = 0
        for character in String(decoding: line, as: UTF8.self) {
            offset += character.utf8.count
            boundaries.append(offset)
        }
        return boundaries
    }
}
