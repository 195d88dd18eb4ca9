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
    /// Something the keeper did or saw, for the event log; programs word these their own way.
    public enum Note: Sendable, Equatable, CustomStringConvertible {
        /// The server answers again after it did not.
        case answersAgain
        /// The server does not answer on its socket.
        case notAnswering(socketPath: String)
        /// The server was stopped on purpose, so the keeper does not start it.
        case stoppedOnPurpose
        /// Starting the server again failed.
        case restartFailed(LocalServerError)
        /// Starting the server again failed for a reason of the local machine.
        case restartFailedLocally(String)

        public var isError: Bool { self != .answersAgain }

        public var description: String {
            switch self {
            case .answersAgain: "the local sync server answers again"
            case .notAnswering(let socketPath): "the local sync server does not answer on \(socketPath)"
            case .stoppedOnPurpose: "the local sync server was stopped on purpose; start it again to sync"
            case .restartFailed(let error): error.description
            case .restartFailedLocally(let reason): reason
            }
        }
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
        var lastProblem: Note?
        func problem(_ note: Note) {
            guard note != lastProblem else { return }
            lastProblem = note
            report(note)
        }
        while !Task.isCancelled {
            ChildProcess.reapDetached()
            if down || !isPushConnected() {
                if await server.answers() {
                    if down {
                        down = false
                        lastProblem = nil
                        report(.answersAgain)
                        reconnect()
                    }
                } else {
                    if !down {
                        down = true
                        problem(.notAnswering(socketPath: server.socketPath))
                    }
                    if await restart(problem: problem) { continue }
                }
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Starts the server again; whether it now runs.
    private func restart(problem: (Note) -> Void) async -> Bool {
        do {
            guard try await server.restartUnlessStopped() != nil else {
                problem(.stoppedOnPurpose)
                return false
            }
            return true
        } catch let error as LocalServerError {
            problem(.restartFailed(error))
            return false
        } catch {
            problem(.restartFailedLocally("\(error)"))
            return false
        }
    }
}
