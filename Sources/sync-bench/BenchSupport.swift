import Foundation

/// Memory readings from /proc, for the benchmark tables.
enum BenchSupport {
    /// A process's peak resident memory (VmHWM) in KiB; `process` is a PID or "self".
    static func peakResidentKiB(of process: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    /// Resets this process's peak resident memory, so that the next reading covers one phase only.
    static func resetPeakResident() {
        // Writing 5 to clear_refs resets VmHWM.
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }
}

extension Duration {
    /// The duration in seconds.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
