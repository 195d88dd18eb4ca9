import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Gives the shell its terminal back when the process is interrupted, killed or crashes while curses owns the
/// screen, and turns the first Ctrl-C into a key.
///
/// A signal handler may only call async-signal-safe functions, and `endwin` is not one: it takes curses' locks
/// and buffers, which the signal may have interrupted halfway. So ``CursesTerminal`` hands over, before it
/// arms this, the bytes `endwin` would send (leave the alternate screen, show the cursor, reset attributes)
/// and the shell's terminal modes; the handler restores them with `write` and `tcsetattr`, which are
/// async-signal-safe, puts back the signal's previous disposition (the default action, or Swift's crash
/// backtracer) and raises the signal again, so the process still dies of it, with its exit status and core dump.
///
/// The first SIGINT while armed is only counted, for ``CursesTerminal/readKey()`` to report as Ctrl-C so that
/// the app can quit cleanly; a second one before the app took the first means the app is stuck, and it ends
/// the process like any other fatal signal.
///
/// SIGWINCH and SIGTSTP are left to ncurses: it turns a resize into `KEY_RESIZE` and handles suspend and resume.
enum TerminalRestorer {
    /// The signals after which the terminal is restored: requests to end, and crashes (traps are how Swift
    /// reports a failed precondition).
    static let handledSignals: [Int32] = [
        SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP,
    ]

    /// Saves the shell's terminal modes from `fileDescriptor` and installs the signal handlers (unarmed); call
    /// before curses changes anything. Signals that were ignored (`nohup`) stay ignored.
    static func install(fileDescriptor: Int32) {
        storage.pointee.fileDescriptor = fileDescriptor
        _ = tcgetattr(fileDescriptor, &storage.pointee.shellModes)
        _ = pendingInterrupts.exchange(0, ordering: .relaxed)
        isArmed.store(false, ordering: .releasing)
        registerExitHandlerOnce()
        for signal in handledSignals {
            var action = sigaction()
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART | SA_ONSTACK
            setHandler(&action, to: handleSignal)
            let previous = previousActions + Int(signal)
            _ = sigaction(signal, nil, previous)
            guard !isIgnored(previous.pointee) else { continue }
            _ = sigaction(signal, &action, nil)
        }
    }

    /// Makes ncurses see SIGWINCH at its default disposition, so that it installs its resize handler; a parent
    /// (or a signal library) that set it to ignored would otherwise leave the app blind to resizes.
    static func unignoreResizeSignal() {
        var current = sigaction()
        _ = sigaction(SIGWINCH, nil, &current)
        guard isIgnored(current) else { return }
        var action = sigaction()
        sigemptyset(&action.sa_mask)
        setHandler(&action, to: nil)
        _ = sigaction(SIGWINCH, &action, nil)
    }

    /// From now on a signal restores the terminal by writing `resetSequence` and the saved modes.
    static func arm(resetSequence: [UInt8]) {
        let count = min(resetSequence.count, resetCapacity)
        resetSequence.withUnsafeBufferPointer { bytes in
            storage.pointee.reset.update(from: bytes.baseAddress!, count: count)
        }
        storage.pointee.resetCount = count
        isArmed.store(true, ordering: .releasing)
    }

    /// Curses has given the terminal back itself: disarms, and puts back the dispositions found by ``install``.
    static func uninstall() {
        isArmed.store(false, ordering: .releasing)
        for signal in handledSignals {
            _ = sigaction(signal, previousActions + Int(signal), nil)
        }
        _ = pendingInterrupts.exchange(0, ordering: .relaxed)
    }

    /// Whether a SIGINT arrived since the last call; consumes it.
    static func takeInterrupt() -> Bool {
        pendingInterrupts.exchange(0, ordering: .relaxed) > 0
    }

    /// Restores the terminal if armed, and disarms. Async-signal-safe: no allocation, no locks.
    static func restoreTerminal() {
        guard isArmed.exchange(false, ordering: .acquiring) else { return }
        let fileDescriptor = storage.pointee.fileDescriptor
        var written = 0
        while written < storage.pointee.resetCount {
            let result = write(fileDescriptor, storage.pointee.reset + written, storage.pointee.resetCount - written)
            if result > 0 {
                written += result
            } else if result < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        _ = tcsetattr(fileDescriptor, TCSANOW, &storage.pointee.shellModes)
    }

    private static func isIgnored(_ action: sigaction) -> Bool {
        #if canImport(Glibc)
            let handler = action.__sigaction_handler.sa_handler
        #else
            let handler = action.__sigaction_u.__sa_handler
        #endif
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    private static func setHandler(_ action: inout sigaction, to handler: (@convention(c) (Int32) -> Void)?) {
        #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = handler
        #else
            action.__sigaction_u.__sa_handler = handler
        #endif
    }

    private static func registerExitHandlerOnce() {
        guard !exitHandlerRegistered.exchange(true, ordering: .relaxed) else { return }
        // An `exit()` while curses is active (a library calling it, an unhandled error path) restores too.
        atexit { TerminalRestorer.restoreTerminal() }
    }
}

/// What the handler reads: plain memory, allocated once and never freed, so that reading it from a signal
/// handler allocates nothing and takes no lock.
private struct RestoreState {
    var fileDescriptor: Int32 = -1
    var shellModes = termios()
    var reset: UnsafeMutablePointer<UInt8>
    var resetCount = 0
}

private let resetCapacity = 1024

// Written only by the main actor while the handlers are unarmed (the `isArmed` store that follows publishes it),
// read by the handler only after it saw `isArmed` true.
nonisolated(unsafe) private let storage: UnsafeMutablePointer<RestoreState> = {
    let state = UnsafeMutablePointer<RestoreState>.allocate(capacity: 1)
    state.initialize(to: RestoreState(reset: .allocate(capacity: resetCapacity)))
    return state
}()

// Indexed by signal number; written by `install` before the handler for that signal is set.
nonisolated(unsafe) private let previousActions: UnsafeMutablePointer<sigaction> = {
    let actions = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
    actions.initialize(repeating: sigaction(), count: 65)
    return actions
}()

private let isArmed = Atomic<Bool>(false)
private let pendingInterrupts = Atomic<Int>(0)
private let exitHandlerRegistered = Atomic<Bool>(false)

private func handleSignal(_ signal: Int32) {
    let savedErrno = errno
    defer { errno = savedErrno }
    if signal == SIGINT && isArmed.load(ordering: .acquiring) {
        let (_, count) = pendingInterrupts.wrappingAdd(1, ordering: .relaxed)
        if count == 1 { return }
    }
    TerminalRestorer.restoreTerminal()
    _ = sigaction(signal, previousActions + Int(signal), nil)
    _ = raise(signal)
}
