import ArgumentParser
import Foundation
import SyncCore
import SyncTesting

/// Memory readings from /proc, for the benchmark tables, the executables the benchmarks run, and what they
/// share: percentiles and the records they save.
enum BenchSupport {
    /// The value at percentile `percent` of `sorted` (ascending, not empty).
    static func percentile<Value>(_ sorted: [Value], _ percent: Int) -> Value {
        sorted[min(sorted.count - 1, sorted.count * percent / 100)]
    }

    /// A small contact-shaped record, the same for every server benchmark.
    static func contactRecord(_ index: Int, zone: RecordZone.ID) -> RecordValue {
        var record = RecordValue(
            recordType: "Contact", recordID: RecordValue.ID(recordName: "contact-\(index)", zoneID: zone))
        record["name"] = .string("Person \(index)")
        record["email"] = .string("person\(index)@example.com")
        record["phone"] = .string("+44 20 7946 \(String(format: "%04d", index % 10_000))")
        return record
    }

    /// The given path, or the executable `name` built next to this one; `option` is the flag that gives a path.
    static func executable(_ path: String?, named name: String, option: String) throws -> String {
        let executable =
            path
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ValidationError("no \(name) at \(executable); run `swift build -c release` first or pass --\(option)")
        }
        return executable
    }

    /// A process's peak resident memory (VmHWM) in KiB; `process` is a PID or "self".
    static func peakResidentKiB(of process: String) -> Int {
        statusKiB("VmHWM", of: process)
    }

    /// A process's resident memory now (VmRSS) in KiB; `process` is a PID or "self".
    static func residentKiB(of process: String) -> Int {
        statusKiB("VmRSS", of: process)
    }

    /// A figure in KiB of /proc/PROCESS/status (`VmRSS`, `RssAnon`, `RssFile`, …); 0 if unreadable.
    static func statusKiB(_ field: String, of process: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    /// A process's CPU time so far (user plus system), in seconds, from /proc/PID/stat; 0 if unreadable.
    /// - Parameter includingChildren: add the time of its children that have ended and been waited for.
    static func cpuSeconds(of process: String, includingChildren: Bool = false) -> Double {
        let stat = (try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8)) ?? ""
        // The command name (field 2) may hold spaces; the fields after its closing parenthesis
        // start at field 3, so utime, stime, cutime and cstime (fields 14 to 17) are at offsets 11 to 14.
        guard let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 14 else { return 0 }
        let ticks = fields[11...(includingChildren ? 14 : 12)].reduce(0) { $0 + (Double($1) ?? 0) }
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// How many files (sockets included) a process has open, from /proc/PID/fd; 0 if unreadable.
    static func openFileCount(of process: String) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/fd").count) ?? 0
    }

    /// Raises this process's soft limit of open files to at least `needed` (up to the hard limit); child
    /// processes started afterwards inherit it. Throws, saying what to do, when the hard limit is lower.
    static func raiseOpenFileLimit(to needed: Int) throws {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return }
        guard limit.rlim_cur < rlim_t(needed) else { return }
        guard limit.rlim_max >= rlim_t(needed) else {
            throw ValidationError(
                "this needs \(needed) open files, and the limit is \(limit.rlim_max) (ulimit -Hn): raise it, or use fewer --sockets"
            )
        }
        limit.rlim_cur = rlim_t(needed)
        guard setrlimit(resource, &limit) == 0 else {
            throw ValidationError(
                "could not raise the open-file limit to \(needed): \(String(cString: strerror(errno)))")
        }
    }

    /// A table's first column: `name` padded to `width` (`%-20@` does not pad on Linux).
    static func padded(_ name: String, to width: Int = 20) -> NSString {
        name.padding(toLength: width, withPad: " ", startingAt: 0) as NSString
    }

    /// Resets a process's peak resident memory (this one's by default), so that the next reading covers one
    /// phase only.
    static func resetPeakResident(of process: String = "self") {
        // Writing 5 to clear_refs resets VmHWM.
        try? "5".write(toFile: "/proc/\(process)/clear_refs", atomically: false, encoding: .utf8)
    }
}

extension Duration {
    /// The duration in seconds.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// CPU seconds spent by each side of a benchmark: this process (the clients, or the devices), the servers it
/// started, and PostgreSQL.
struct CPUTimes {
    var clients: Double
    var servers: Double
    var postgres: Double

    /// Each figure per 1,000 of `records`.
    func perThousand(of records: Int) -> CPUTimes {
        let scale = 1000 / Double(records)
        return CPUTimes(clients: clients * scale, servers: servers * scale, postgres: postgres * scale)
    }
}

/// The CPU time so far of each process named `postgres` on the machine (the server and its backends, each with
/// the children it has reaped: the backends that have ended), by process ID: PostgreSQL's share in a benchmark
/// that runs one.
struct PostgresCPU {
    /// Each process's seconds, by its ID.
    var seconds: [String: Double] = [:]

    /// Every `postgres` process's time now.
    static func now() -> PostgresCPU {
        var reading = PostgresCPU()
        for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        where pid.allSatisfy(\.isNumber) {
            let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
            guard name.hasPrefix("postgres") else { continue }
            reading.seconds[pid] = BenchSupport.cpuSeconds(of: pid, includingChildren: true)
        }
        return reading
    }

    /// The seconds PostgreSQL's processes spent since `earlier`, each process's own growth added up. A process
    /// that ended meanwhile takes nothing away: its time comes back only through the process that reaps it (a
    /// server, counted there), and not at all when that is not a `postgres` process. A total of every process
    /// at each reading went down when processes ended between the two (a pg_auto_failover cluster ends several
    /// a second).
    func since(_ earlier: PostgresCPU) -> Double {
        seconds.reduce(0) { total, process in total + max(0, process.value - (earlier.seconds[process.key] ?? 0)) }
    }
}

/// CPU time spent by this process, by the servers and (when asked) by PostgreSQL since the previous reading.
struct CPUReading {
    private let servers: [ServerProcess]
    private let countsPostgres: Bool
    private var before: CPUTimes
    private var postgresBefore: PostgresCPU

    /// - Parameter countsPostgres: read every `postgres` process too (the server and its backends, with the
    ///   backends that ended); otherwise PostgreSQL's figure stays 0.
    init(servers: [ServerProcess], countsPostgres: Bool = false) {
        self.servers = servers
        self.countsPostgres = countsPostgres
        before = Self.now(servers: servers)
        postgresBefore = countsPostgres ? PostgresCPU.now() : PostgresCPU()
    }

    init(server: ServerProcess) {
        self.init(servers: [server])
    }

    /// This process's and the servers' CPU so far (PostgreSQL's is read apart, process by process).
    private static func now(servers: [ServerProcess]) -> CPUTimes {
        CPUTimes(
            clients: BenchSupport.cpuSeconds(of: "self"), servers: servers.reduce(0) { $0 + $1.cpuSeconds() },
            postgres: 0)
    }

    /// Seconds of CPU each side spent since the last call (or since `init`).
    mutating func next() -> CPUTimes {
        let now = Self.now(servers: servers)
        let postgresNow = countsPostgres ? PostgresCPU.now() : PostgresCPU()
        defer { (before, postgresBefore) = (now, postgresNow) }
        return CPUTimes(
            clients: now.clients - before.clients, servers: now.servers - before.servers,
            postgres: postgresNow.since(postgresBefore))
    }
}

/// A benchmark that could not run, or a reference run that did not measure what it should have: said as it
/// is, without the usage text a wrong argument gets.
struct BenchError: Error, CustomStringConvertible {
    var description: String
}
