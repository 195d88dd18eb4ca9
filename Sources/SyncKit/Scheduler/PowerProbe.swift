import Foundation

/// Holds non-urgent work while the machine runs on battery below a threshold, as Linux reports
/// it under `/sys/class/power_supply`.
///
/// The machine is on battery when one of its own batteries (`type` `Battery`, not `scope`
/// `Device` such as a mouse's) is `Discharging` and no adapter (`Mains`, `USB`, …) is `online`.
/// The charge is the mean `capacity` of its batteries, or `energy_now / energy_full`
/// (`charge_now / charge_full`) where `capacity` is missing. A desktop without a battery, or a
/// directory that cannot be read, never holds work.
public struct PowerProbe: ConditionProbe {
    /// The directory of power supplies.
    public var root: String
    /// The charge, from 0 to 1, below which work is held while on battery.
    public var threshold: Double

    /// Creates a probe that reads `root` and holds work on battery below `threshold` (0.15 is 15 %).
    public init(root: String = "/sys/class/power_supply", threshold: Double = 0.15) {
        self.root = root
        self.threshold = threshold
    }

    public func check() async -> SyncScheduler.DeferralReason? {
        guard let charge = batteryCharge(), charge < threshold else { return nil }
        return .onBattery(percent: Int((charge * 100).rounded()))
    }

    /// The charge from 0 to 1 when running on battery, or `nil` when on mains or without a battery.
    func batteryCharge() -> Double? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        var discharging = false
        var adapterOnline = false
        var charges: [Double] = []
        for name in names.sorted() {
            let supply = (root as NSString).appendingPathComponent(name)
            let type = read(supply, "type")
            if type == "Battery" {
                guard read(supply, "scope") != "Device" else { continue }
                if read(supply, "status") == "Discharging" { discharging = true }
                if let charge = charge(of: supply) { charges.append(charge) }
            } else if type != nil, read(supply, "online") == "1" {
                adapterOnline = true
            }
        }
        guard discharging, !adapterOnline, !charges.isEmpty else { return nil }
        return charges.reduce(0, +) / Double(charges.count)
    }

    private func charge(of supply: String) -> Double? {
        if let capacity = read(supply, "capacity").flatMap(Double.init) {
            return min(1, max(0, capacity / 100))
        }
        for (now, full) in [("energy_now", "energy_full"), ("charge_now", "charge_full")] {
            if let now = read(supply, now).flatMap(Double.init), let full = read(supply, full).flatMap(Double.init),
                full > 0
            {
                return min(1, max(0, now / full))
            }
        }
        return nil
    }

    private func read(_ supply: String, _ attribute: String) -> String? {
        let path = (supply as NSString).appendingPathComponent(attribute)
        return (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
