import Foundation
import Terminal

/// Small formatting helpers for the panes: counts, times, wrapping by display width.
enum TextFormatting {
    /// "100,000": digits grouped by three, the same in every locale so that the screen is predictable.
    /// A size in bytes for a person: "12.4 KB".
    static func bytes(_ value: Int64) -> String {
        ByteCountFormatter.string(fromByteCount: value, countStyle: .file)
    }

    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    /// "1 change", "3 changes".
    static func plural(_ value: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(count(value)) \(value == 1 ? singular : plural ?? singular + "s")"
    }

    /// "12:03:04" today, "2024-05-01 12:03" on another day, in `timeZone`.
    static func time(_ date: Date, now: Date, timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let clock = String(format: "%02d:%02d:%02d", parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
        if calendar.isDate(date, inSameDayAs: now) { return clock }
        return String(
            format: "%04d-%02d-%02d %02d:%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0, parts.hour ?? 0,
            parts.minute ?? 0)
    }

    /// "just now", "5 s ago", "3 min ago", "2 h ago", "4 days ago".
    static func age(of date: Date, now: Date) -> String {
        let seconds = Int(now.timeIntervalSince(date).rounded(.down))
        switch seconds {
        case ..<1: return "just now"
        case ..<60: return "\(seconds) s ago"
        case ..<3600: return "\(seconds / 60) min ago"
        case ..<86_400: return "\(seconds / 3600) h ago"
        default: return plural(seconds / 86_400, "day") + " ago"
        }
    }

    /// `text` broken into lines of at most `width` columns, at spaces where possible; a word wider than a line
    /// is cut. Line breaks in the text are kept (they are shown as ↵ otherwise).
    static func wrap(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            var lineWidth = 0
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                let wordWidth = word.displayWidth
                let needed = lineWidth == 0 ? wordWidth : lineWidth + 1 + wordWidth
                if needed <= width {
                    line += lineWidth == 0 && line.isEmpty ? String(word) : " " + word
                    lineWidth = needed
                    continue
                }
                if !line.isEmpty || lineWidth > 0 { lines.append(line) }
                line = ""
                lineWidth = 0
                var rest = Substring(word)
                while rest.displayWidth > width {
                    var piece = ""
                    var pieceWidth = 0
                    while let next = rest.first, pieceWidth + next.displayWidth <= width {
                        piece.append(next)
                        pieceWidth += next.displayWidth
                        rest = rest.dropFirst()
                    }
                    if piece.isEmpty {
                        // A character wider than the line: drop it rather than loop.
                        rest = rest.dropFirst()
                        continue
                    }
                    lines.append(piece)
                }
                line = String(rest)
                lineWidth = rest.displayWidth
            }
            lines.append(line)
        }
        return lines
    }
}
