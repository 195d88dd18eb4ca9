import Foundation

/// Holds non-urgent work while the system is overloaded: while the one-minute load average from
/// `/proc/loadavg`, per processor core, is above a threshold.
///
/// A file that cannot be read or parsed never holds work.
public struct LoadProbe: ConditionProbe {
    /// The file in `/proc/loadavg`'s format: "0.52 0.58 0.59 1/467 12345".
    public var path: String
    /// The cores the load is shared by.
    public var cores: Int
    /// The load per core above which work is held.
    public var threshold: Double

    /// Creates a probe that reads `path` and holds work while the load per core exceeds `threshold`.
    public init(
        path: String = "/proc/loadavg", cores: Int = ProcessInfo.processInfo.activeProcessorCount,
        threshold: Double = 1.5
    ) {
        self.path = path
        self.cores = max(1, cores)
        self.threshold = threshold
    }

    public func check() async -> SyncScheduler.DeferralReason? {
        guard let load = loadPerCore(), load > threshold else { return nil }
        return .highLoad(perCore: load)
    }

    /// The one-minute load average divided by ``cores``, or `nil` if it cannot be read.
    func loadPerCore() -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let first = text.split(whereSeparator: \.isWhitespace).first,
            let load = Double(first)
        else { return nil }
        return load / Double(cores)
    }
}
