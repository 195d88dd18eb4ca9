import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `posix_spawn` attributes with an empty signal mask and every signal at its default action.
///
/// Not Foundation's `Process`: it passes on the spawning thread's signal mask, and the threads Swift Testing
/// runs tests on block most signals; a program started that way would never see SIGTERM, SIGINT or SIGCHLD.
final class SpawnAttributes {
    var attributes = posix_spawnattr_t()

    init() {
        posix_spawnattr_init(&attributes)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        sigdelset(&allSignals, SIGKILL)
        sigdelset(&allSignals, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    }

    deinit {
        posix_spawnattr_destroy(&attributes)
    }
}

/// Adds a spawn file action that closes every descriptor from `lowest` up in the child, as glibc 2.34's
/// `posix_spawn_file_actions_addclosefrom_np` does (looked up at run time: Swift's Glibc module does not
/// export it); with an older glibc, one close for each descriptor open now. A child that outlives its
/// parent (the local server, a tmux server) would otherwise keep a lock, another program's pipe or the
/// sockets of other tests' servers open, and those servers would never see their connections close.
func addCloseFrom(_ actions: inout posix_spawn_file_actions_t, _ lowest: Int32) {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, lowest)
        return
    }
    let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap {
        Int32($0)
    }
    for descriptor in open where descriptor >= lowest && fcntl(descriptor, F_GETFD) >= 0 {
        posix_spawn_file_actions_addclose(&actions, descriptor)
    }
}
