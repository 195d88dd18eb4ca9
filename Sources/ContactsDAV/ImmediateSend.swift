import ContactsStore
import Synchronization

/// Sends a client's write at once (a DAV client's write is a whole edit, not a keystroke to wait out),
/// one send at a time: writes that come during a send are sent by the next.
final class ImmediateSend: Sendable {
    private let device: ContactsDevice
    private let state = Mutex<(running: Task<Void, Never>?, again: Bool)>((nil, false))

    init(device: ContactsDevice) { self.device = device }

    func request() {
        state.withLock { state in
            if state.running != nil {
                state.again = true
            } else {
                state.running = Task { await self.sendUntilCaughtUp() }
            }
        }
    }

    private func sendUntilCaughtUp() async {
        while true {
            // A failure is the scheduler's to retry (the edit is in the outbox).
            try? await device.sync(fetch: false)
            let caughtUp = state.withLock { state -> Bool in
                guard state.again else {
                    state.running = nil
                    return true
                }
                state.again = false
                return false
            }
            if caughtUp { return }
        }
    }

    func finish() async {
        await state.withLock { $0.running }?.value
    }
}
