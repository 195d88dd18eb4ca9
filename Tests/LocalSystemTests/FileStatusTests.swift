import Foundation
import LocalSystem
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("FileStatus: kind, owner, mode and size as the file system says, a link seen as a link")
struct FileStatusTests {
    /// A new directory of its own under the temporary directory; the caller removes it.
    private func scratch() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("file-status-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    @Test("a symbolic link to a private directory is reported as a link, not as the directory it names")
    func linkIsNotFollowed() throws {
        let base = try scratch()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let target = base + "/target"
        #expect(mkdir(target, 0o700) == 0)
        #expect(chmod(target, 0o700) == 0)
        let link = base + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)

        let seen = try FileStatus.of(link)
        #expect(seen.kind == .symbolicLink)
        #expect(seen.size == Int64(target.utf8.count), "a link's size is the length of the path it holds")

        let followed = try FileStatus.of(link, followingSymbolicLinks: true)
        #expect(followed.kind == .directory)
        #expect(followed.mode == 0o700)
        #expect(followed.inode == (try FileStatus.of(target)).inode)
    }

    @Test("a directory of another mode is reported with its own bits, set-group-ID and sticky included")
    func directoryModeAsItIs() throws {
        let base = try scratch()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let shared = base + "/shared"
        #expect(mkdir(shared, 0o700) == 0)
        #expect(chmod(shared, 0o3775) == 0)

        let status = try FileStatus.of(shared)
        #expect(status.kind == .directory)
        #expect(status.mode == 0o3775)
        #expect(status.octalMode == "3775")
        #expect(status.bitsForOthers == 0o075)
        #expect(status.isOwnedByThisUser)
    }

    @Test("a file another user owns is reported with that owner")
    func ownerAsItIs() throws {
        let base = try scratch()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let file = base + "/theirs"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("12345".utf8)))
        guard geteuid() == 0 else {
            // Only root can give a file away; as anyone else, the owner is this user.
            #expect(try FileStatus.of(file).owner == geteuid())
            return
        }
        #expect(chown(file, 65534, 65534) == 0)
        let status = try FileStatus.of(file)
        #expect(status.owner == 65534)
        #expect(!status.isOwnedByThisUser)
        #expect(status.kind == .regular)
        #expect(status.size == 5)
    }

    @Test("an open file's size and kind come from its descriptor; a pipe is not a regular file")
    func descriptor() throws {
        let base = try scratch()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let file = base + "/bytes"
        #expect(FileManager.default.createFile(atPath: file, contents: Data(repeating: 7, count: 4096)))
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        let status = try FileStatus.of(descriptor: descriptor, path: file)
        #expect(status.kind == .regular)
        #expect(status.size == 4096)

        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        #expect(try FileStatus.of(descriptor: ends[0], path: "pipe").kind == .fifo)
    }

    @Test("a socket is a socket; nothing at a path is missing, a path through a file is not")
    func socketAndErrors() throws {
        let base = try scratch()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let socketPath = base + "/s.sock"
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: socketPath.utf8.prefix($0.count - 1)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        #expect(try FileStatus.of(socketPath).kind == .socket)

        #expect(FileStatus.ifPresent(base + "/nothing") == nil)
        let missing = #expect(throws: FileStatusError.self) { try FileStatus.of(base + "/nothing") }
        #expect(missing?.isMissing == true)
        #expect(missing?.description == "cannot look at \(base)/nothing: No such file or directory")

        let file = base + "/plain"
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        let through = #expect(throws: FileStatusError.self) { try FileStatus.of(file + "/inside") }
        #expect(through?.errno == ENOTDIR)
        #expect(through?.isMissing == false)
    }
}
