import ContactsLocal
import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The local account's token as another user of the machine would try to collect it: by listening where
/// an older version's server listened (a TCP port anyone may take once the server stopped), or by putting
/// a socket where the server's should be. The commands send nothing to either, and say why.
@Suite(
    "Attacks on the local server: a squatter on the old port, a socket in a directory others can enter",
    .serialized, .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct LocalServerAttackTests {
    @Test("a program on the port an older version saved gets no connection: the commands use the socket")
    func squatterOnTheOldPort() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            defer { program.stopLocalServer() }
            let local = LocalServer.ofContacts(dataDirectory: directory, program: ContactsProgram.path)
            #expect(try await program.run(["add", "--name", "Ada Lovelace"]).status == 0)
            #expect(try await program.run(["server", "stop"]).status == 0)

            // The layout of a version that listened on TCP: its port saved, the server stopped. Another user
            // listens there now, as the 15-line listener of the report did.
            let squatter = try TCPSquatter(port: 0)
            try "\(squatter.port)\n4242\n".write(
                toFile: DataDirectory.Layout(directory).legacyServerAddress, atomically: true, encoding: .utf8)

            for arguments in [["list"], ["sync"], ["--device", "laptop", "list"], ["status"]] {
                let outcome = try await program.run(arguments)
                #expect(outcome.status == 0, "\(arguments): \(outcome.error)")
            }
            let listed = try await program.run(["--device", "laptop", "list"])
            #expect(
                listed.output.contains("Ada Lovelace"), "the second device synced through the socket: \(listed.output)")
            #expect(squatter.connectionsWaiting() == 0, "nothing connected to the squatter's port")
            #expect(FileManager.default.fileExists(atPath: local.socketPath), "the server listens on its socket")
            #expect(
                !FileManager.default.fileExists(atPath: DataDirectory.Layout(directory).legacyServerAddress),
                "the old port is forgotten once the server moved to the socket")
        }
    }

    @Test("a socket in a server directory others can write to, or another user's: refused, nothing sent")
    func socketInAnUnsafeDirectory() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            defer { program.stopLocalServer() }
            let local = LocalServer.ofContacts(dataDirectory: directory, program: ContactsProgram.path)
            #expect(try await program.run(["add", "--name", "Ada Lovelace"]).status == 0)
            #expect(try await program.run(["server", "stop"]).status == 0)

            // Another user's socket where the server's was, in a directory that lets them in.
            chmod(local.serverDirectory, 0o777)
            let squatter = try UnixSquatter(path: local.socketPath)
            for arguments in [["sync"], ["server", "start"], ["add", "--name", "Grace Hopper"]] {
                let outcome = try await program.run(arguments)
                let said = outcome.error
                #expect(
                    said.contains("has mode 777") && said.contains("chmod 700 \(local.serverDirectory)"),
                    "\(arguments) says what is wrong and how to fix it: \(said)")
                #expect(outcome.status != 0, "\(arguments) fails")
            }
            // What needs no server still works, from this device's own data.
            let listed = try await program.run(["list"])
            #expect(listed.status == 0 && listed.output.contains("Ada Lovelace"), "\(listed.output) \(listed.error)")
            #expect(squatter.connectionsWaiting() == 0, "nothing connected to the planted socket")

            // A directory of another user, however private, is not this user's server.
            chmod(local.serverDirectory, 0o700)
            chown(local.serverDirectory, 65534, 65534)
            let foreign = try await program.run(["sync"])
            #expect(foreign.status != 0)
            #expect(foreign.error.contains("belongs to user ID 65534"), "\(foreign.error)")
            #expect(squatter.connectionsWaiting() == 0, "nothing connected to the planted socket")
            chown(local.serverDirectory, getuid(), getgid())
        }
    }
}
