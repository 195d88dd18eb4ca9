import ArgumentParser
import Foundation
import SyncTesting

/// Runs whole `contacts` commands, each a new process, on devices of one data directory against one
/// server, as a user would: what each took, its peak memory and what it printed.
struct ContactsCommands {
    /// One step of a benchmark table.
    struct Step {
        var name: String
        var seconds: Double
        var peakKiB: Int
        var contacts: Int?
        /// Every run, when the step is the median of several.
        var runs: [Double]? = nil
        /// The CPU time the command used, and the server meanwhile, in seconds.
        var cpuSeconds: Double? = nil
        var serverCPUSeconds: Double? = nil
    }

    /// What one command did.
    struct Command {
        var seconds: Double
        var peakKiB: Int
        var output: String
        var cpuSeconds: Double
        var serverCPUSeconds: Double?
    }

    let contacts: String
    let server: String
    /// The server's CPU time so far, in seconds, when it is a process of this machine's.
    let serverCPU: (@Sendable () -> Double)?
    let directory: URL

    /// A fresh directory for the devices' data and the benchmark's files.
    init(contacts: String, server: String, serverCPU: (@Sendable () -> Double)? = nil, name: String) throws {
        self.contacts = contacts
        self.server = server
        self.serverCPU = serverCPU
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// Signs device A up and each of `others` in, to the account `username`.
    func signUp(_ first: String = "A", others: [String] = ["B"], username: String = "bench") throws {
        _ = try command(first, ["account", "signup", "--username", username])
        for device in others { _ = try command(device, ["account", "signin", "--username", username]) }
    }

    func timed(_ name: String, _ device: String, _ arguments: [String], contacts: Int? = nil) throws -> Step {
        Step(name, try command(device, arguments, outputLimit: 4096), contacts: contacts)
    }

    /// ``program(_:outputLimit:)`` as a step of the table.
    func timedProgram(_ name: String, _ arguments: [String]) throws -> Step {
        Step(name, try program(arguments, outputLimit: 4096))
    }

    /// Runs `contacts --device D --server URL --data-dir DIR ARGS…` and waits for it; only the first
    /// `outputLimit` bytes of what it printed are read (a whole list would raise this process's peak,
    /// which Linux counts to every command it starts afterwards).
    func command(_ device: String, _ arguments: [String], outputLimit: Int = .max) throws -> Command {
        try program(
            [
                contacts, "--device", device, "--server", server, "--data-dir",
                directory.appendingPathComponent("data").path,
            ] + arguments, outputLimit: outputLimit)
    }

    /// Runs `arguments` (a program and its arguments: `contacts`, or a reference beside it) and waits for it,
    /// as ``command(_:_:outputLimit:)`` runs a `contacts` command.
    func program(_ arguments: [String], outputLimit: Int = .max) throws -> Command {
        let log = directory.appendingPathComponent("output.txt").path
        try? FileManager.default.removeItem(atPath: log)
        let serverStart = serverCPU?()
        let start = ContinuousClock.now
        let ended = try ChildProcess(
            arguments,
            environment: ["CONTACTS_PASSWORD": "bench-password", "CONTACTS_PASSPHRASE": "bench passphrase"],
            output: .file(log)
        ).wait()
        let seconds = (ContinuousClock.now - start).inSeconds
        let serverSeconds = serverStart.flatMap { start in serverCPU.map { $0() - start } }
        let file = try? FileHandle(forReadingFrom: URL(fileURLWithPath: log))
        defer { try? file?.close() }
        let output = String(decoding: (try? file?.read(upToCount: outputLimit)) ?? Data(), as: UTF8.self)
        guard ended.status == 0 else {
            let name = URL(fileURLWithPath: arguments[0]).lastPathComponent
            throw ValidationError("`\(([name] + arguments.dropFirst()).joined(separator: " "))` failed: \(output)")
        }
        return Command(
            seconds: seconds, peakKiB: ended.peakResidentKiB, output: output, cpuSeconds: ended.cpuSeconds,
            serverCPUSeconds: serverSeconds)
    }

    /// How many lines the last command printed, counted a piece at a time (a list of a million contacts is
    /// never read whole into this process, whose peak Linux counts to the commands it starts).
    func outputLineCount() throws -> Int {
        let file = try FileHandle(forReadingFrom: directory.appendingPathComponent("output.txt"))
        defer { try? file.close() }
        var lines = 0
        while let piece = try file.read(upToCount: 1 << 20), !piece.isEmpty {
            lines += piece.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        }
        return lines
    }

    /// The ID of the first contact device `device` lists.
    func firstContactID(_ device: String) throws -> String {
        let list = try command(device, ["list"], outputLimit: 4096).output
        guard let id = list.split(separator: "\n").first?.split(whereSeparator: { $0 == " " || $0 == "\t" }).first
        else {
            throw ValidationError("`contacts list` on \(device) printed nothing")
        }
        return String(id)
    }

    /// The step of median time (the upper one of an even count).
    /// The median step, carrying every run's time.
    static func median(_ steps: [Step]) -> Step {
        var median = BenchSupport.percentile(steps.sorted { $0.seconds < $1.seconds }, 50)
        median.runs = steps.map(\.seconds)
        return median
    }

    static func format(_ seconds: Double) -> String {
        seconds < 1 ? "\(Int((seconds * 1000).rounded())) ms" : String(format: "%.2f s", seconds)
    }
}

extension ContactsCommands.Step {
    /// The step of one command that ran.
    init(_ name: String, _ command: ContactsCommands.Command, contacts: Int? = nil) {
        self.init(
            name: name, seconds: command.seconds, peakKiB: command.peakKiB, contacts: contacts,
            cpuSeconds: command.cpuSeconds, serverCPUSeconds: command.serverCPUSeconds)
    }
}
