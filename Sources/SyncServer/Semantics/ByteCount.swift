import Foundation

/// Sizes in bytes as people read and write them: quotas in messages, options and admin output.
public enum ByteCount {
    /// `bytes` for a person: "512 bytes", "1.5 MiB (1,572,864 bytes)".
    public static func describe(_ bytes: Int64) -> String {
        let exact = grouped(bytes) + (bytes == 1 ? " byte" : " bytes")
        let units: [(String, Double)] = [
            ("TiB", 0x100_0000_0000), ("GiB", 0x4000_0000), ("MiB", 0x10_0000), ("KiB", 0x400),
        ]
        guard let (unit, size) = units.first(where: { Double(abs(bytes)) >= $0.1 }) else { return exact }
        let value = Double(bytes) / size
        let rounded = value.rounded() == value ? String(Int64(value)) : String(format: "%.1f", value)
        return "\(rounded) \(unit) (\(exact))"
    }

    /// `bytes` with a comma between each group of three digits.
    static func grouped(_ bytes: Int64) -> String {
        let digits = String(bytes.magnitude)
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return bytes < 0 ? "-" + text : text
    }

    /// A size as written on a command line: a whole number of bytes, or one with a unit, `KiB`,
    /// `MiB`, `GiB`, `TiB` (powers of 1024) or `KB`, `MB`, `GB`, `TB` (powers of 1000), as in
    /// `500MB` or `2 GiB`. Nil for anything else, or a size that does not fit in 63 bits.
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        let multipliers: [String: Int64] = [
            "": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "kb": 1_000,
            "mb": 1_000_000, "gb": 1_000_000_000, "tb": 1_000_000_000_000,
        ]
        guard !digits.isEmpty, let number = Int64(digits), let multiplier = multipliers[unit] else { return nil }
        let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : product
    }
}
