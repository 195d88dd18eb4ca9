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

@Suite(
    "The data directory is the user's alone: checked at start, created private", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct DataDirectoryTests {
    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test(
        "a data directory others can write (0777) is refused with the chmod that fixes it; nothing is read or written")
    func writableByOthers() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory + "/contacts"
            let program = ContactsProgram(dataDirectory: data)
            let added = try await program.run(["add", "--name", "Ada", "--no-sync"])
            #expect(added.status == 0, "\(added.error)")
            chmod(data, 0o777)
            let listed = try await program.run(["list"])
            #expect(listed.status != 0)
            #expect(listed.error.contains("\(data) can be written by other users"), "\(listed.error)")
            #expect(listed.error.contains("chmod 700 \(data)"), "\(listed.error)")
            #expect(!listed.output.contains("Ada"))
            #expect(try Self.mode(data) == 0o777, "the app does not change who may write on the user's behalf")

            // The same for the devices directory and a device file.
            chmod(data, 0o700)
            chmod(data + "/devices", 0o775)
            let devices = try await program.run(["list"])
            #expect(devices.error.contains("chmod 700 \(data)/devices"), "\(devices.error)")
            chmod(data + "/devices", 0o700)
            chmod(DataDirectory.Layout(data).deviceFile("default"), 0o666)
            let file = try await program.run(["list"])
            #expect(file.error.contains("chmod 600 \(data)/devices/default.sqlite"), "\(file.error)")

            // Fixed as the message says: it works again.
            chmod(DataDirectory.Layout(data).deviceFile("default"), 0o600)
            let fixed = try await program.run(["list"])
            #expect(fixed.status == 0, "\(fixed.error)")
            #expect(fixed.output.contains("Ada"))
        }
    }

    @Test("a data directory of an earlier version, readable by others (0755, files 0644), is made private silently")
    func readableByOthers() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory + "/contacts"
            let program = ContactsProgram(dataDirectory: data)
            let added = try await program.run(["add", "--name", "Ada", "--no-sync"])
            #expect(added.status == 0, "\(added.error)")
            chmod(data, 0o755)
            chmod(data + "/devices", 0o755)
            chmod(DataDirectory.Layout(data).deviceFile("default"), 0o644)
            let listed = try await program.run(["list"])
            #expect(listed.status == 0, "\(listed.error)")
            #expect(listed.output.contains("Ada"))
            #expect(listed.error.isEmpty, "\(listed.error)")
            #expect(try Self.mode(data) == 0o700)
            #expect(try Self.mode(data + "/devices") == 0o700)
            #expect(try Self.mode(DataDirectory.Layout(data).deviceFile("default")) == 0o600)
        }
    }

    @Test("a data directory the app creates is 0700 from the start, whatever the umask")
    func createdPrivate() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory + "/new/contacts"
            let result = try await ChildProcess.run([
                "/bin/sh", "-c",
                "umask 000; exec \(ScriptedEditor.quoted(ContactsProgram.path)) --data-dir \(ScriptedEditor.quoted(data)) add --name Ada --no-sync",
            ])
            #expect(result.status == 0, "\(result.error)")
            #expect(try Self.mode(data) == 0o700)
            #expect(try Self.mode(directory + "/new") == 0o700)
            #expect(try Self.mode(data + "/devices") == 0o700)
            #expect(try Self.mode(DataDirectory.Layout(data).deviceFile("default")) == 0o600)
        }
    }
}
