import Foundation
import LocalSystem
import SyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("FileLock: one holder at a time, found without touching the lock, never inherited")
struct FileLockTests {
    private func lockPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("file-lock-\(UUID().uuidString).lock").path
    }

    @Test("a held lock is refused at once, naming the holder; released, it can be taken again")
    func heldThenReleased() throws {
        let path = lockPath()
        defer { unlink(path) }
        let first = try FileLock.acquire(path)
        #expect(throws: FileLockError.held(path: path, holder: getpid())) { try FileLock.acquire(path) }
        #expect(FileLock.holder(of: path) == getpid())
        first.release()
        #expect(FileLock.holder(of: path) == nil)
        let second = try FileLock.acquire(path)
        second.release()
    }

    @Test(
        "the holder writes its process ID into the lock file; the ID left there after it is released names no holder, nor does a lock file someone else wrote"
    )
    func recordedHolder() throws {
        let path = lockPath()
        defer { unlink(path) }
        let lock = try FileLock.acquire(path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "\(getpid())\n")
        lock.release()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "\(getpid())\n", "the ID stays")
        #expect(FileLock.holder(of: path) == nil, "this process no longer holds it")
        // An ID written by hand, of a process that holds no lock on it (this one): no holder either.
        try "\(getpid())\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(FileLock.holder(of: path) == nil)
        // Another lock of this process, on another file: still not a holder of this one.
        let otherPath = lockPath()
        defer { unlink(otherPath) }
        let other = try FileLock.acquire(otherPath)
        defer { other.release() }
        #expect(FileLock.holder(of: path) == nil)
    }

    @Test("the lock file is created private (0600) and its descriptor is closed on exec")
    func privateAndCloseOnExec() throws {
        let path = lockPath()
        defer { unlink(path) }
        let lock = try FileLock.acquire(path)
        defer { lock.release() }
        #expect(try FileStatus.of(path).mode == 0o600)
        let opened = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { Int32($0) }
            .filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path }
        #expect(opened.count == 1)
        for descriptor in opened {
            #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0, "a program started now would inherit the lock")
        }
    }

    @Test("another process's lock: holder(of:) names it, waiting gives up, and its end frees the lock")
    func anotherProcess() async throws {
        let path = lockPath()
        defer { unlink(path) }
        let holder = try ChildProcess(["/usr/bin/flock", "--exclusive", "--close", path, "/bin/sleep", "600"])
        defer { holder.stop(grace: .seconds(1)) }
        try await waitUntil("flock(1) holds the lock") {
            FileLock.holder(of: path) == holder.pid
        } observed: {
            "holder: \(FileLock.holder(of: path).map(String.init) ?? "none")"
        }
        #expect(throws: FileLockError.held(path: path, holder: holder.pid)) { try FileLock.acquire(path) }
        await #expect(throws: FileLockError.timedOut(path: path, after: .milliseconds(100))) {
            try await FileLock.acquire(path, timeout: .milliseconds(100))
        }
        holder.terminate(SIGKILL)
        holder.wait()
        let lock = try await FileLock.acquire(path, timeout: .seconds(60))
        lock.release()
    }
}
