import Foundation
import GRDB

/// A value a conflict overwrote, for the conflict log.
struct LostValue: Sendable, Equatable {
    enum Side: String, Sendable { case device, server }
    let column: String
    let kept: DatabaseValue
    let lost: DatabaseValue
    let lostFrom: Side
}

/// Settles a conflict by a table's policy, column by column, and says what it overwrote.
enum ConflictMerge {
    static func resolve(_ policy: ConflictPolicy, _ conflict: RowConflict, columns: [String]) -> (
        merged: RowValues, lost: [LostValue]
    ) {
        var merged: RowValues = [:]
        switch policy {
        case .custom(let resolver):
            merged = resolver.resolve(conflict)
            for column in columns where merged[column] == nil { merged[column] = conflict.client[column] ?? .null }
        case .lastEditPerField, .threeWayMerge:
            for column in columns {
                merged[column] = settle(column, conflict, threeWay: policy == .threeWayMerge)
            }
        }
        var lost: [LostValue] = []
        for column in columns {
            let kept = merged[column] ?? .null
            let ancestor = conflict.ancestor.map { RecordMapping.comparable($0[column] ?? .null) }
            for (side, value) in [(LostValue.Side.device, conflict.client[column]), (.server, conflict.server[column])]
            {
                let value = value ?? .null
                let comparable = RecordMapping.comparable(value)
                // A side's value is lost when it was an edit (not the ancestor's) and is not what was kept.
                if comparable != RecordMapping.comparable(kept), comparable != ancestor {
                    lost.append(LostValue(column: column, kept: kept, lost: value, lostFrom: side))
                }
            }
        }
        return (merged, lost)
    }

    /// One column: the side that changed it, else (both did) a line merge of text where asked and possible,
    /// else the later edit.
    private static func settle(_ column: String, _ conflict: RowConflict, threeWay: Bool) -> DatabaseValue {
        let client = conflict.client[column] ?? .null
        let server = conflict.server[column] ?? .null
        let clientForm = RecordMapping.comparable(client)
        let serverForm = RecordMapping.comparable(server)
        if clientForm == serverForm { return client }
        if let ancestor = conflict.ancestor.map({ $0[column] ?? .null }) {
            let ancestorForm = RecordMapping.comparable(ancestor)
            if clientForm == ancestorForm { return server }
            if serverForm == ancestorForm { return client }
            if threeWay, case .string(let base) = ancestor.storage, case .string(let mine) = client.storage,
                case .string(let theirs) = server.storage,
                let text = mergeLines(ancestor: base, client: mine, server: theirs)
            {
                return text.databaseValue
            }
        }
        return conflict.clientEditedAt > (conflict.serverModifiedAt ?? .distantPast) ? client : server
    }

    /// A three-way merge of text by lines: where only one side changed a run of lines between lines
    /// both kept, that side's run; nil where both changed the same run differently.
    static func mergeLines(ancestor: String, client: String, server: String) -> String? {
        let a = ancestor.split(separator: "\n", omittingEmptySubsequences: false)
        let c = client.split(separator: "\n", omittingEmptySubsequences: false)
        let s = server.split(separator: "\n", omittingEmptySubsequences: false)
        // Quadratic in lines: a note, not a book.
        guard a.count * max(c.count, s.count) <= 4_000_000 else { return nil }
        let toClient = matches(a, c)
        let toServer = matches(a, s)
        var merged: [Substring] = []
        var (nextA, nextC, nextS) = (0, 0, 0)
        let anchors = a.indices.filter { toClient[$0] != nil && toServer[$0] != nil } + [a.count]
        for anchor in anchors {
            let (endC, endS) = anchor == a.count ? (c.count, s.count) : (toClient[anchor]!, toServer[anchor]!)
            let base = a[nextA..<anchor]
            let mine = c[nextC..<endC]
            let theirs = s[nextS..<endS]
            if mine.elementsEqual(base) {
                merged += theirs
            } else if theirs.elementsEqual(base) || mine.elementsEqual(theirs) {
                merged += mine
            } else {
                return nil
            }
            if anchor < a.count { merged.append(a[anchor]) }
            (nextA, nextC, nextS) = (anchor + 1, endC + 1, endS + 1)
        }
        return merged.joined(separator: "\n")
    }

    /// For each line of `a`, the line of `b` it is matched with in a longest common subsequence.
    private static func matches(_ a: [Substring], _ b: [Substring]) -> [Int?] {
        let width = b.count + 1
        var lengths = [Int32](repeating: 0, count: (a.count + 1) * width)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                lengths[i * width + j] =
                    a[i] == b[j]
                    ? lengths[(i + 1) * width + j + 1] + 1
                    : max(lengths[(i + 1) * width + j], lengths[i * width + j + 1])
            }
        }
        var result = [Int?](repeating: nil, count: a.count)
        var (i, j) = (0, 0)
        while i < a.count, j < b.count {
            if a[i] == b[j] {
                result[i] = j
                (i, j) = (i + 1, j + 1)
            } else if lengths[(i + 1) * width + j] >= lengths[i * width + j + 1] {
                i += 1
            } else {
                j += 1
            }
        }
        return result
    }
}
