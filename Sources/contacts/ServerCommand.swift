import ArgumentParser
import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import Logging
import SyncServer

#if canImport(Glibc)
    import Glibc
#endif

/// `contacts server`: the zero-setup local sync server.
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server", abstract: "The local sync server: its status; start, stop, or run it in the foreground.",
        discussion: """
            With no --server, contacts syncs through a server of its own, with its data in <data-dir>/server. \
            It listens only on the Unix socket <data-dir>/server/sync.sock, in a directory only you can enter, \
            never on a network port: no other user of the machine can reach it or pose as it. You rarely need \
            these commands: any command that needs the server starts it in the background, and an open \
            full-screen app starts it again if it dies, then reconnects by itself. After \
            `contacts server stop`, apps wait for it instead of starting it again.

            `contacts server` with no verb is `contacts server run`.
            """,
        subcommands: [Status.self, Start.self, Stop.self, Run.self], defaultSubcommand: Run.self)

    /// The options of every `contacts server` verb: only the data directory matters.
    struct Options: ParsableArguments {
        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard global.server == nil else {
                throw ValidationError(
                    "contacts server manages the local server of --data-dir; --server names another server, which it does not manage"
                )
            }
        }

        var local: LocalServer {
            Session.localServer(global.dataDirectory)
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Say whether the local sync server runs, and where: socket, process ID, storage, log.",
            discussion: "Exits 0 when it runs and 3 when it does not, as `systemctl status` does.")

        @OptionGroup var options: Options
        @Flag(help: "Print JSON.") var json = false

        struct Report: Encodable {
            var running: Bool
            var url: String
            var socket: String
            var pid: Int32?
            var stoppedOnPurpose: Bool
            var storage: String
            var log: String
        }

        func run() async throws {
            let local = options.local
            let running = local.running()
            let report = Report(
                running: running != nil, url: local.url.absoluteString, socket: local.socketPath, pid: running?.pid,
                stoppedOnPurpose: running == nil && local.wasStoppedOnPurpose, storage: local.storagePath,
                log: local.logFile)
            if json {
                print(try ContactJSON.encode(report))
            } else {
                let state =
                    if let running { "running (pid \(running.pid))" } else if report.stoppedOnPurpose {
                        "not running: stopped with `contacts server stop`; `contacts server start` starts it"
                    } else {
                        "not running; `contacts server start` starts it, as does any command that needs it"
                    }
                print("server:   \(state)")
                print("socket:   \(report.socket)")
                print("storage:  \(report.storage)")
                print("log:      \(report.log)")
            }
            if running == nil { throw ExitCode(3) }
        }
    }

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "start",
            abstract: "Start the local sync server in the background, unless it runs.",
            discussion: "It listens on the Unix socket <data-dir>/server/sync.sock, and nowhere else.")

        @OptionGroup var options: Options
        /// Versions before the socket took a port; a script that still passes one learns why it is gone.
        @Option(help: .hidden) var port: Int?

        func validate() throws {
            if port != nil {
                throw ValidationError(
                    "the local sync server no longer listens on a port, only on its socket <data-dir>/server/sync.sock, which no other user can reach; for a server other machines reach, run sync-server (see its --help)"
                )
            }
        }

        func run() async throws {
            let local = options.local
            let wasRunning = local.running() != nil
            do {
                _ = try await local.ensureRunning()
            } catch let error as LocalServerError {
                throw CommandFailure(CLIWords.say(error))
            }
            let pid = local.running().map { " (pid \($0.pid))" } ?? ""
            print("the local sync server \(wasRunning ? "already runs" : "runs") on \(local.socketPath)\(pid)")
            print("its log: \(local.logFile)")
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stop",
            abstract: "Stop the local sync server gracefully, and wait until it has exited.",
            discussion: """
                Requests in flight finish first. Open apps keep working offline and wait for the server; \
                `contacts server start`, or any command that needs it, starts it again.
                """)

        @OptionGroup var options: Options

        func run() async throws {
            do {
                if let pid = try await options.local.stop() {
                    print("stopped the local sync server (pid \(pid))")
                } else {
                    print("the local sync server is not running")
                }
            } catch let error as LocalServerError {
                throw CommandFailure(CLIWords.say(error))
            }
        }
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run",
            abstract: "Run the local sync server in the foreground, until Ctrl-C or SIGTERM.",
            discussion: """
                On the data directory's storage it is the local server, on its socket \
                <data-dir>/server/sync.sock only: commands and apps find it there. With --storage elsewhere it \
                is a server of its own on TCP (127.0.0.1:8080 by default).
                """)

        @OptionGroup var options: Options
        @Option(help: "With --storage: the port to listen on; 0 picks a free one. (default: 8080)")
        var port: Int?
        @Option(help: "With --storage: the address to listen on.") var host = "127.0.0.1"
        @Option(help: "The SQLite file. (default: <data-dir>/server/server.sqlite)") var storage: String?
        @Option(help: "With --storage: the bcrypt cost of password hashes, 4 to 31. (default: 12)")
        var bcryptCost: UInt8?
        @Flag(help: .hidden) var detach = false

        func validate() throws {
            if let port, !(0...65535).contains(port) { throw ValidationError("--port must be from 0 to 65535") }
            if let bcryptCost, !SyncServerConfiguration.bcryptCosts.contains(bcryptCost) {
                throw ValidationError("--bcrypt-cost must be from 4 to 31")
            }
        }

        func run() async throws {
            if port != nil || host != "127.0.0.1", storage.map(options.local.isLocalStorage) ?? true {
                throw CommandFailure(
                    "the local sync server listens only on its socket \(options.local.socketPath), which no other user can reach; --port and --host are for a server of its own (--storage FILE), or run sync-server"
                )
            }
            if bcryptCost != nil, storage.map(options.local.isLocalStorage) ?? true {
                throw CommandFailure(
                    "the local sync server's password is kept beside it, so it hashes it at the lowest cost; --bcrypt-cost is for a server of its own (--storage FILE)"
                )
            }
            // Started by another contacts command: leave its session, so closing its terminal does not stop it.
            if detach { setsid() }
            let local = options.local
            let storage = self.storage ?? local.storagePath
            var runner = SyncServerRunner(storagePath: storage)
            // One user's own server: their disk is the limit, not a quota.
            runner.configuration.defaultQuotaBytes = nil
            runner.host = host
            runner.logLevel = .notice
            if local.isLocalStorage(storage) {
                if let running = local.running() {
                    throw CommandFailure(
                        "the local sync server already runs on \(local.socketPath) (pid \(running.pid)); `contacts server stop` stops it"
                    )
                }
                if let problem = local.socketProblem() { throw CommandFailure(CLIWords.say(problem)) }
                // Started again: apps that wait for it may start it from now on.
                local.clearStopMarker()
                runner.unixSocketPath = local.socketPath
                runner.listensOnTCP = false
                // The local account's password sits in plaintext beside the server, in a file only this user
                // reads (and is 24 random bytes unless they changed it): a slow hash would guard nothing that
                // reading that file does not give, and every command that signs in would pay for it.
                runner.configuration.bcryptCost = 4
            } else {
                runner.port = port ?? 8080
                if let bcryptCost { runner.configuration.bcryptCost = bcryptCost }
            }
            // Process-wide, so the program's to set up: swift-metrics has one backend per process.
            ServerMetrics.bootstrap()
            do {
                try await runner.run()
            } catch let error as StartupError {
                switch error.reason {
                case .addressInUse(let addresses):
                    throw CommandFailure(
                        "\(addresses.joined(separator: " or ")) is already in use; stop what listens there or pass another --port"
                    )
                case .storageInUse(let lockPath):
                    throw CommandFailure(
                        "another sync server is already using this storage (\(lockPath) is locked); stop it or pass another --storage"
                    )
                case .described:
                    throw CommandFailure(error.description)
                }
            }
        }
    }
}
