import Foundation
import SyncKit

/// Keeps the zero-setup server there for an app that stays open (the full-screen app).
///
/// While the device's push socket is connected the server is surely up, and the keeper only watches. When
/// the socket drops, it asks the server's health every ``interval``; a server that does not answer is
/// started again on its port, through the same start lock as every `contacts` command, so that of several
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
    let device: ContactsDevice
    let interval: Duration

    public init(server: LocalServer, device: ContactsDevice, interval: Duration = .seconds(1)) {
        self.server = server
        self.device = device
        self.interval = interval
    }

    /// Watches until the task is cancelled, reporting what happens through `report`.
    public func run(report: @Sendable (Note) -> Void) async {
        let url = device.options.serverURL
        var down = false
        var lastProblem: String?
        func problem(_ text: String) {
            guard text != lastProblem else { return }
            lastProblem = text
            report(Note(text: text, isError: true))
        }
        while !Task.isCancelled {
            ServerProcess.reapSpawned()
            if down || !device.engine.isPushConnected {
                if await server.answers(url) {
                    if down {
                        down = false
                        lastProblem = nil
                        report(
                            Note(text: "the local sync server answers again at \(url.absoluteString)", isError: false))
                        for engine in device.engines { engine.reconnect() }
                    }
                } else {
                    if !down {
                        down = true
                        problem("the local sync server at \(url.absoluteString) does not answer")
                    }
                    if await restart(url, problem: problem) { continue }
                }
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Starts the server again; whether it now runs where this device expects it.
    private func restart(_ url: URL, problem: (String) -> Void) async -> Bool {
        do {
            guard let started = try await server.restartUnlessStopped() else {
                problem(
                    "the local sync server was stopped with `contacts server stop`; `contacts server start` starts it again"
                )
                return false
            }
            guard started == url else {
                problem(
                    "the local sync server now listens at \(started.absoluteString), not \(url.absoluteString); quit and open contacts again to follow it"
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
