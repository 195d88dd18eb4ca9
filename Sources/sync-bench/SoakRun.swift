import ArgumentParser
import Foundation
import SyncCore
import SyncKit
import SyncTesting

/// One soak against servers already started: accounts, devices and listening sockets set up, the
/// edits with a line every minute, then the settling and the checks.
struct SoakRun {
    let options: SoakBenchmark
    let servers: [ServerProcess]
    let label: String

    private let pushLog: SoakPushLog
    private let errors = SoakErrors()

    init(options: SoakBenchmark, servers: [ServerProcess], label: String) {
        self.options = options
        self.servers = servers
        self.label = label
        pushLog = SoakPushLog(accounts: options.accounts)
    }

    /// What the contacts the devices created and deleted, per account, leave on the server.
    private struct Ledger {
        var created: [Set<Record.ID>]
        var deleted: [Set<Record.ID>]
    }

    func run() async throws -> SoakOutcome {
        let (pushLog, errors) = (self.pushLog, self.errors)
        let urls = servers.map(\.baseURL)
        let listeners = options.sockets - options.devices
        print(
            "sync-bench soak: \(label); \(options.sockets) push sockets (\(options.devices) devices' own, \(listeners) listening) over \(options.accounts) accounts; \(options.editsPerSecond) edits/s for \(options.duration); seed \(options.seed)"
        )

        // Accounts: created on the first instance, one token each, shared by that account's devices and sockets.
        var signedIn: [String] = []
        for account in 0..<options.accounts {
            let client = TestClient(baseURL: urls[0])
            let credentials = AccountCredentials(username: "soak\(account)", password: "correct horse battery")
            let _: AccountInfo = try await Self.retryingWhenRateLimited {
                try await client.call(.createAccount, credentials)
            }
            let session = try await Self.retryingWhenRateLimited {
                try await client.signedIn(username: credentials.username, password: credentials.password)
            }
            try await session.saveZones(SoakDevice.zone.zoneName)
            signedIn.append(session.token!)
        }
        let tokens = signedIn

        // Devices: engine d belongs to account d % accounts and talks to instance (d / accounts) % instances.
        let setupStart = ContinuousClock.now
        var devices: [SoakDevice] = []
        var engines: [SyncEngine] = []
        for number in 0..<options.devices {
            let account = number % options.accounts
            let device = SoakDevice(number: number, account: account, pushLog: pushLog, errors: errors)
            var configuration = SyncEngine.Configuration(
                database: Database(
                    serverURL: URL(string: urls[(number / options.accounts) % urls.count])!,
                    credentials: .token(tokens[account]), deviceID: "device-\(number)"),
                stateSerialization: nil, delegate: device)
            // The default probes hold work back while the load is high, which a soak on one machine makes it.
            configuration.schedulerProbes = []
            devices.append(device)
            engines.append(SyncEngine(configuration))
        }
        try await waitUntil(
            "every device has its push socket, has fetched and has saved its zone", timeout: .seconds(180),
            poll: .milliseconds(50)
        ) {
            zip(devices, engines).allSatisfy { device, engine in
                engine.isPushConnected && device.fetches > 0 && engine.state.pendingDatabaseChanges.isEmpty
            }
        } observed: {
            "\(engines.count { $0.isPushConnected }) of \(engines.count) push sockets connected, \(devices.count { $0.fetches > 0 }) fetched"
        }
        print(
            String(
                format: "%d devices syncing after %.1f s", devices.count, (ContinuousClock.now - setupStart).inSeconds))

        // Listening sockets: listener l belongs to account l % accounts, on instance (l / accounts) % instances.
        var listenerTasks: [Task<Void, Never>] = []
        let opening = 50
        for listener in 0..<listeners {
            let account = listener % options.accounts
            let number = pushLog.addListener(account: account)
            let url = URL(string: urls[(listener / options.accounts) % urls.count])!
            listenerTasks.append(
                Task {
                    do {
                        let closure = try await PushSocket.listen(
                            serverURL: url, token: tokens[account], deviceID: "listener-\(listener)"
                        ) { push in
                            if push.event == .connected {
                                pushLog.setConnected(number, true)
                            } else if push.scope == .private {
                                pushLog.pushArrived(number)
                            }
                        }
                        pushLog.setConnected(number, false)
                        let reason =
                            closure.map { "code \($0.code.map(String.init) ?? "none") \($0.reason)" } ?? "ended"
                        errors.add(.socketDrop, "listener \(listener) closed: \(reason)")
                    } catch {
                        pushLog.setConnected(number, false)
                        errors.add(.socketDrop, "listener \(listener): \(error)")
                    }
                })
            if (listener + 1) % opening == 0 || listener == listeners - 1 {
                try await waitUntil("\(listener + 1) listening sockets are connected", timeout: .seconds(60)) {
                    pushLog.connectedListeners == listener + 1
                } observed: {
                    "\(pushLog.connectedListeners) connected; errors: \(errors.examples)"
                }
            }
        }
        print(
            String(
                format: "%d listening sockets connected after %.1f s", listeners,
                (ContinuousClock.now - setupStart).inSeconds))

        // From now on an engine's failure or a closed socket is an error.
        var watchers: [Task<Void, Never>] = []
        for (number, engine) in engines.enumerated() {
            guard let scheduler = engine.scheduler else { continue }
            watchers.append(Task { await Self.watch(scheduler, device: number, errors: errors) })
        }

        let memoryAtStart = servers.map(ServerMemoryReading.init)
        // One line a minute: per server its memory and open files (its sockets among them), then this
        // side's view: sockets open, edits made, writes sent, the minute's push latency and write round
        // trip, errors so far, and the machine's load (it is shared).
        func line(_ elapsed: Duration, edits: Int, latencies: (pushes: [Double], writes: [Double])) -> String {
            // SQLite's storage beside its memory: the server's page caches hold the file they read.
            let memory = servers.map { server in
                "RSS \(ServerMemoryReading(server)) MiB, \(BenchSupport.openFileCount(of: "\(server.pid)")) files"
                    + (server.storageBytes.map { String(format: ", storage %.1f MiB", Double($0) / 1_048_576) } ?? "")
            }.joined(separator: "; ")
            let open = pushLog.connectedListeners + engines.count { $0.isPushConnected }
            let pushes = latencies.pushes.sorted()
            let writes = latencies.writes.sorted()
            return String(
                format:
                    "%@  %@ | sockets %d/%d | edits %d, writes %d | push p50 %.1f ms, p99 %.1f ms (%d) | write p50 %.1f ms, p99 %.1f ms | errors %d | load %.1f",
                Self.clock(elapsed) as NSString, memory as NSString, open, options.sockets, edits,
                pushLog.writeCounts.sent, Self.percentile(pushes, 50), Self.percentile(pushes, 99), pushes.count,
                Self.percentile(writes, 50), Self.percentile(writes, 99), errors.total, BenchResults.loadAverage)
        }

        // The edits, at a steady rate; a line every minute.
        var generator = SplitMix64(seed: options.seed)
        var ledger = Ledger(
            created: Array(repeating: [], count: options.accounts),
            deleted: Array(repeating: [], count: options.accounts))
        var allLatencies: [Double] = []
        var allRoundTrips: [Double] = []
        let start = ContinuousClock.now
        let end = start + options.duration
        let interval = Duration.seconds(1 / options.editsPerSecond)
        var nextEdit = start
        var nextLine = start + .seconds(60)
        var edits = 0
        while true {
            let next = min(nextEdit, nextLine, end)
            try await Task.sleep(until: next, clock: .continuous)
            if next == end { break }
            if next == nextLine {
                let latencies = pushLog.takeLatencies()
                allLatencies += latencies.pushes
                allRoundTrips += latencies.writes
                print(line(next - start, edits: edits, latencies: latencies))
                nextLine += .seconds(60)
                continue
            }
            nextEdit += interval
            edits += 1
            let number = Int(generator.next() % UInt64(devices.count))
            let device = devices[number]
            let engine = engines[number]
            let ids = device.editableIDs
            let roll = Double.random(in: 0..<1, using: &generator)
            let note = "edit \(edits) on device \(number)"
            if ids.count < 3 || roll < 0.4 {
                let id = device.create(note: note)
                ledger.created[device.account].insert(id)
                engine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
            } else if roll < 0.85 {
                let id = ids[Int(generator.next() % UInt64(ids.count))]
                if device.edit(id, note: note) { engine.state.add(pendingRecordZoneChanges: [.saveRecord(id)]) }
            } else {
                let id = ids[Int(generator.next() % UInt64(ids.count))]
                if device.delete(id) {
                    ledger.deleted[device.account].insert(id)
                    engine.state.add(pendingRecordZoneChanges: [.deleteRecord(id)])
                }
            }
        }
        let latencies = pushLog.takeLatencies()
        allLatencies += latencies.pushes
        allRoundTrips += latencies.writes
        let lastLine = line(ContinuousClock.now - start, edits: edits, latencies: latencies)
        print(lastLine + "  (end of edits)")
        let memoryAtEnd = servers.map(ServerMemoryReading.init)

        // Settle: every device sends what it has, and every device hears every change.
        var failures: [String] = []
        let settleStart = ContinuousClock.now
        do {
            try await waitUntil(
                "every device has sent its edits and had them answered", timeout: .seconds(180),
                poll: .milliseconds(100)
            ) {
                pushLog.allAnswered
                    && zip(devices, engines).allSatisfy { $0.isSettled && $1.state.pendingRecordZoneChanges.isEmpty }
            } observed: {
                "\(zip(devices, engines).count { !$0.isSettled || !$1.state.pendingRecordZoneChanges.isEmpty }) devices with changes pending"
            }
        } catch let timeout as WaitTimeout {
            failures.append("\(timeout)")
        }
        var serverNotes: [[Record.ID: String]] = []
        for (account, token) in tokens.enumerated() {
            let client = TestClient(baseURL: urls[account % urls.count], token: token)
            let fetched = try await client.fetchAllZoneChanges(SoakDevice.zone, resultsLimit: 400)
            var notes: [Record.ID: String] = [:]
            for record in fetched.modifications {
                if case .some(.string(let note)) = record["note"] {
                    notes[record.recordID] = note
                } else {
                    notes[record.recordID] = ""
                }
            }
            for deletion in fetched.deletions { notes[deletion.recordID] = nil }
            serverNotes.append(notes)
        }
        func converged() -> Int { devices.count { $0.notes == serverNotes[$0.account] } }
        do {
            try await waitUntil(
                "every device holds its account's records and every listening socket heard every write",
                timeout: .seconds(120), poll: .milliseconds(100)
            ) {
                let pushes = pushLog.pushCounts
                return converged() == devices.count && pushes.received >= pushes.expected
            } observed: {
                let pushes = pushLog.pushCounts
                return
                    "\(converged()) of \(devices.count) devices converged, \(pushes.received) of \(pushes.expected) pushes"
            }
        } catch let timeout as WaitTimeout {
            failures.append("\(timeout)")
        }
        let settleTime = ContinuousClock.now - settleStart
        let lastLatencies = pushLog.takeLatencies()
        allLatencies += lastLatencies.pushes
        allRoundTrips += lastLatencies.writes
        errors.stop()
        for watcher in watchers { watcher.cancel() }
        for engine in engines { await engine.cancelOperations() }
        for task in listenerTasks { task.cancel() }

        // The checks.
        var lost = 0
        var unexpected = 0
        for account in 0..<options.accounts {
            let expected = ledger.created[account].subtracting(ledger.deleted[account])
            let held = Set(serverNotes[account].keys)
            lost += expected.subtracting(held).count
            unexpected += held.subtracting(expected).count
        }
        let convergedDevices = converged()
        let pushes = pushLog.pushCounts
        let writes = pushLog.writeCounts
        allLatencies.sort()
        allRoundTrips.sort()
        let records = serverNotes.reduce(0) { $0 + $1.count }
        print(
            String(
                format:
                    "settled in %.1f s: %d edits in %d writes (%d changed something), %d conflicts resolved; %d contacts on the server",
                settleTime.inSeconds, edits, writes.sent, writes.changed, errors.conflicts, records))
        let outcome = SoakOutcome(
            pushP50: Self.percentile(allLatencies, 50), pushP99: Self.percentile(allLatencies, 99),
            pushMax: allLatencies.last ?? .nan, writeP50: Self.percentile(allRoundTrips, 50),
            writeP99: Self.percentile(allRoundTrips, 99), pushCount: allLatencies.count, edits: edits,
            errors: errors.total,
            memoryAtStart: memoryAtStart, memoryAtEnd: memoryAtEnd,
            peakKiB: servers.map { BenchSupport.peakResidentKiB(of: "\($0.pid)") }, converged: convergedDevices,
            lost: lost + unexpected, failures: failures)
        print(
            String(
                format:
                    "push (%d on listening sockets): p50 %.1f ms, p99 %.1f ms (target < 100), max %.1f ms; %d of %d pushes arrived",
                outcome.pushCount, outcome.pushP50, outcome.pushP99, outcome.pushMax, pushes.received, pushes.expected))
        print(
            String(
                format: "write round trip (batch handed over to answer handled, %d writes): p50 %.1f ms, p99 %.1f ms",
                allRoundTrips.count, outcome.writeP50, outcome.writeP99))
        for index in servers.indices {
            print(
                "server \(index + 1) memory: RSS at start \(memoryAtStart[index]) MiB, at end \(memoryAtEnd[index]) MiB; peak \(outcome.peakKiB[index] / 1024) MiB (VmHWM)"
            )
        }
        print("errors: \(errors.total) (\(errors.summary))")
        for example in errors.examples { print("  \(example)") }
        print("converged: \(convergedDevices)/\(devices.count) devices")
        print("records lost: \(lost), records that should not be there: \(unexpected)")
        print("this process: peak \(BenchSupport.peakResidentKiB(of: "self") / 1024) MiB")

        var result = outcome
        if errors.total > 0 { result.failures.append("\(errors.total) errors") }
        if convergedDevices < devices.count {
            result.failures.append("\(devices.count - convergedDevices) devices not converged")
        }
        if lost + unexpected > 0 { result.failures.append("\(lost) records lost, \(unexpected) unexpected") }
        if pushes.received < pushes.expected {
            result.failures.append("\(pushes.expected - pushes.received) pushes missing")
        }
        return result
    }

    /// Counts an engine's failures (conflicts aside: the device resolves them) and a push socket that closes.
    private static func watch(_ scheduler: SyncScheduler, device: Int, errors: SoakErrors) async {
        let first = await scheduler.status
        var lastFailure = first.lastFailure
        var connected = first.pushConnected
        let conflicts: [SyncError.Code] = [.serverRecordChanged, .unknownItem, .batchRequestFailed]
        for await status in scheduler.statusUpdates {
            if let failure = status.lastFailure, failure != lastFailure {
                lastFailure = failure
                if !(failure.code.map { conflicts.contains($0) } ?? false) {
                    errors.add(.engine, "device \(device), \(failure.work): \(failure.message)")
                }
            }
            if connected && !status.pushConnected && !Task.isCancelled {
                errors.add(.socketDrop, "device \(device): its push socket closed")
            }
            connected = status.pushConnected
        }
    }

    /// Runs `body` again while the server answers `requestRateLimited`, after the wait it asks for.
    private static func retryingWhenRateLimited<Value>(_ body: () async throws -> Value) async throws -> Value {
        for _ in 0..<10 {
            do {
                return try await body()
            } catch let error as SyncError where error.code == .requestRateLimited {
                try await Task.sleep(for: .seconds(error.retryAfter ?? 1))
            }
        }
        return try await body()
    }

    /// The value at `percent` of `sorted`, NaN when there is none.
    static func percentile(_ sorted: [Double], _ percent: Int) -> Double {
        sorted.isEmpty ? .nan : BenchSupport.percentile(sorted, percent)
    }

    /// `m:ss`.
    static func clock(_ elapsed: Duration) -> String {
        let seconds = Int(elapsed.inSeconds.rounded())
        return String(format: "%5d:%02d", seconds / 60, seconds % 60)
    }
}

/// A server process's memory at one moment, from /proc/PID/status.
struct ServerMemoryReading: CustomStringConvertible {
    var residentKiB: Int
    var anonymousKiB: Int
    var fileKiB: Int

    init(_ server: ServerProcess) {
        let pid = "\(server.pid)"
        residentKiB = BenchSupport.residentKiB(of: pid)
        anonymousKiB = BenchSupport.statusKiB("RssAnon", of: pid)
        fileKiB = BenchSupport.statusKiB("RssFile", of: pid)
    }

    var description: String {
        String(
            format: "%.1f (anon %.1f + file %.1f)", Double(residentKiB) / 1024, Double(anonymousKiB) / 1024,
            Double(fileKiB) / 1024)
    }
}

/// A soak's figures and what failed.
struct SoakOutcome {
    var pushP50: Double
    var pushP99: Double
    var pushMax: Double
    var writeP50: Double
    var writeP99: Double
    var pushCount: Int
    var edits: Int
    var errors: Int
    var memoryAtStart: [ServerMemoryReading]
    var memoryAtEnd: [ServerMemoryReading]
    var peakKiB: [Int]
    var converged: Int
    var lost: Int
    var failures: [String]

    /// `soak.sqlite.pushP99.ms`, `soak.postgres.2.serverMemory.end.MiB`, …; memory is the largest
    /// instance's.
    func record(id: String, label: String, devices: Int, in results: inout BenchResults) {
        func mebibytes(_ kiB: [Int]) -> Double { Double(kiB.max() ?? 0) / 1024 }
        results.add("\(id).pushP50.ms", name: "\(label): push p50", unit: "ms", better: .lower, runs: [pushP50])
        results.add(
            "\(id).pushP99.ms", name: "\(label): push p99", unit: "ms", better: .lower, runs: [pushP99], target: 100)
        results.add("\(id).pushMax.ms", name: "\(label): push max", unit: "ms", better: .lower, runs: [pushMax])
        results.add(
            "\(id).writeP50.ms", name: "\(label): write round trip p50", unit: "ms", better: .lower, runs: [writeP50])
        results.add(
            "\(id).writeP99.ms", name: "\(label): write round trip p99", unit: "ms", better: .lower, runs: [writeP99])
        results.add(
            "\(id).pushes.count", name: "\(label): pushes timed", unit: "pushes", better: .higher,
            runs: [Double(pushCount)])
        results.add("\(id).edits.count", name: "\(label): edits", unit: "edits", better: .higher, runs: [Double(edits)])
        results.add(
            "\(id).errors.count", name: "\(label): errors", unit: "errors", better: .lower, runs: [Double(errors)],
            target: 0)
        results.add(
            "\(id).serverMemory.start.MiB", name: "\(label): server RSS at start", unit: "MiB", better: .lower,
            runs: [mebibytes(memoryAtStart.map(\.residentKiB))])
        results.add(
            "\(id).serverMemory.end.MiB", name: "\(label): server RSS at end", unit: "MiB", better: .lower,
            runs: [mebibytes(memoryAtEnd.map(\.residentKiB))])
        results.add(
            "\(id).serverMemory.peak.MiB", name: "\(label): server peak RSS", unit: "MiB", better: .lower,
            runs: [mebibytes(peakKiB)])
        results.add(
            "\(id).converged.devices", name: "\(label): devices converged", unit: "devices", better: .higher,
            runs: [Double(converged)], target: Double(devices))
        results.add(
            "\(id).lost.records", name: "\(label): records lost or unexpected", unit: "records", better: .lower,
            runs: [Double(lost)], target: 0)
    }
}
