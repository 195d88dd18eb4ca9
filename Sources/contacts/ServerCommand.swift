import ArgumentParser
import ContactsCore
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
            With no --server, contacts syncs through a server of its own on 127.0.0.1, with its data in \
            <data-dir>/server. You rarely need these commands: any command that needs the server starts it in \
            the background, and an open full-screen app starts it again if it dies, then reconnects by itself. \
            The server keeps its port (saved in <data-dir>/server/address), so it comes back where every device \
            expects it. After `contacts server stop`, apps wait for it instead of starting it again.

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
            LocalServer(dataDirectory: global.dataDirectory, executable: Session.executablePath())
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Say whether the local sync server runs, and where: URL, process ID, storage, log.",
            discussion: "Exits 0 when it runs and 3 when it does not, as `systemctl status` does.")

        @OptionGroup var options: Options
        @Flag(help: "Print JSON.") var json = false

        struct Report: Encodable {
            var running: Bool
            var url: String?
            var pid: Int32?
            var stoppedOnPurpose: Bool
            var storage: String
            var log: String
        }

        func run() async throws {
            let local = options.local
            let running = local.running()
            let report = Report(
                running: running != nil, url: local.knownURL()?.absoluteString, pid: running?.pid,
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
                print("url:      \(report.url ?? "none yet: a free port is picked the first time")")
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
            discussion: """
                It listens on the port saved with the data; the first time on a free one. With --port, on that \
                port from now on (stop it first if it runs elsewhere; open apps must then be restarted).
                """)

        @OptionGroup var options: Options
        @Option(help: "The port to listen on from now on; 0 picks a free one.") var port: Int?

        func validate() throws {
            if let port, !(0...65535).contains(port) { throw ValidationError("--port must be from 0 to 65535") }
        }

        func run() async throws {
            let local = options.local
            let wasRunning = local.running() != nil
            let url: URL
            do {
                url = try await local.ensureRunning(port: port)
            } catch {
                throw CommandFailure("\(error)")
            }
            let pid = local.running().map { " (pid \($0.pid))" } ?? ""
            print("the local sync server \(wasRunning ? "already runs" : "runs") at \(url.absoluteString)\(pid)")
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
            } catch {
                throw CommandFailure("\(error)")
            }
        }
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run",
            abstract: "Run the local sync server in the foreground, until Ctrl-C or SIGTERM.",
            discussion: """
                On the data directory's storage it is the local server: commands and apps find it, and it \
                keeps its port. With --storage elsewhere it is a server of its own (port 8080 by default).
                """)

        @OptionGroup var options: Options
        @Option(
            help:
                "The port to listen on; 0 picks a free one. (default: the port saved with the data; the first time, a free one)"
        )
        var port: Int?
        @Option(help: "The address to listen on.") var host = "127.0.0.1"
        @Option(help: "The SQLite file. (default: <data-dir>/server/server.sqlite)") var storage: String?
        @Flag(help: .hidden) var detach = false

        func validate() throws {
            if let port, !(0...65535).contains(port) { throw ValidationError("--port must be from 0 to 65535") }
        }

        func run() async throws {
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
                        "the local sync server already runs at \(running.url.absoluteString) (pid \(running.pid)); `contacts server stop` stops it"
                    )
                }
                // Started again: apps that wait for it may start it from now on.
                local.clearStopMarker()
                runner.port = port ?? local.savedPort() ?? 0
                runner.onListening = { port in
                    do {
                        try local.recordListening(port: port, pid: getpid())
                    } catch {
                        warn("\(error); commands will not find this server")
                    }
                }
            } else {
                runner.port = port ?? 8080
            }
            do {
                try await runner.run()
            } catch let error as StartupError {
                throw CommandFailure(error.description)
            }
        }
    }
}
