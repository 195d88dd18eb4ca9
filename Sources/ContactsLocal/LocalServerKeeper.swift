import ContactsModel
import Foundation
import LocalSystem

/// Keeps the zero-setup server there for an app that stays open (the full-screen app).
///
/// While the device's push socket is connected the server is surely up, and the keeper only watches. When
/// the socket drops, it asks the server's health every ``interval``; a server that does not answer is
/// started again on its socket, through the same start lock as every `contacts` command, so that of several
/// apps racing exactly one starts it and the others find it running. Once the server answers again, the
/// device's engine reconnects at once instead of waiting out its backoff, which sends what was edited
/// meanwhile and fetches what other devices sent. A server stopped with `contacts server stop` is not
/// started again: the keeper waits for someone to start it.
public final class LocalServerKeeper: Sendable {
    /// Something the keeper did or saw, for the event log.
    public struct Note: Sendable, Equatable {
        public var text: String
        public var isError: Bool
    }

    public let server: LocalServer
    /// Whether the app's push socket is connected (the server is then surely up).
    let isPushConnected: @Sendable () -> Bool
    /// Has the app reconnect at once, once the server answers again.
    let reconnect: @Sendable () -> Void
    let interval: Duration

    /// A keeper for `server`, which learns from the app whether its push socket is connected and asks it to
    /// reconnect (the keeper knows nothing of what the app syncs).
    public init(
        server: LocalServer, interval: Duration = .seconds(1), isPushConnected: @escaping @Sendable () -> Bool,
        reconnect: @escaping @Sendable () -> Void
    ) {
        self.server = server
        self.isPushConnected = isPushConnected
        self.reconnect = reconnect
        self.interval = interval
    }

    /// Watches until the task is cancelled, reporting what happens through `report`.
    public func run(report: @Sendable (Note) -> Void) async {
        var down = false
        var lastProblem: String?
        func problem(_ text: String) {
            guard text != lastProblem else { return }
            lastProblem = text
            report(Note(text: text, isError: true))
        }
        while !Task.isCancelled {
            ChildProcess.reapDetached()
            if down || !isPushConnected() {
                if await server.answers() {
                    if down {
                        down = false
                        lastProblem = nil
                        report(
                            Note(text: "the local sync server answers again", isError: false))
                        reconnect()
                    }
                } else {
                    if !down {
                        down = true
                        problem("the local sync server does not answer on \(server.socketPath)")
                    }
                    if await restart(problem: problem) { continue }
                }
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Starts the server again; whether it now runs.
    private func restart(problem: (String) -> Void) async -> Bool {
        do {
            guard try await server.restartUnlessStopped() != nil else {
                problem(
                    "the local sync server was stopped with `contacts server stop`; `contacts server start` starts it again"
                )
                return false
            }
            return true
        } catch {
            problem("\(error)")
            return false
        }
    }
}
