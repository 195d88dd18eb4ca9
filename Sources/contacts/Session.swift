import ArgumentParser
import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import SyncClient
import SyncCore
import SyncCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// Opens the device a command works on, finding (or starting) its server and signing in to the
/// zero-setup account when there is no `--server`.
enum Session {
    static func open(_ global: GlobalOptions, needsServer: Bool, automaticallySync: Bool = false) async throws
        -> ContactsDevice
    {
        TransportSecurity.current = global.transportSecurity
        // Before anything is written there (the local server's storage, the account file).
        try DataDirectory.prepare(global.dataDirectory)
        let local = localServer(global.dataDirectory)
        let serverURL: URL
        if let server = global.serverURL {
            serverURL = server
        } else if needsServer {
            do {
                serverURL = try await local.ensureRunning()
            } catch let error as LocalServerError {
                throw CommandFailure(CLIWords.say(error))
            }
        } else {
            // The socket's path is fixed: whether or not the server runs, it is the only address the
            // local account's token may go to (and each request checks its directory first).
            serverURL = local.url
        }
        var options = ContactsDevice.Options(
            dataDirectory: global.dataDirectory, deviceName: global.device, serverURL: serverURL,
            automaticallySync: automaticallySync, holdsWorkUnderLoad: !global.syncWhenBusy)
        // A command that needs the server asks its version while the device's file opens, rather than beside
        // the sync's first requests: on two cores that takes the HTTP client's start off the sync's path.
        if needsServer { options.serverVersionCheck = ContactsDevice.beginServerVersionCheck(serverURL: serverURL) }
        let device = try ContactsDevice(options)
        if global.server == nil && needsServer {
            if !device.isSignedIn {
                try await signInLocally(device, local)
            } else if try device.account.passphrase() == nil {
                // Signed in by a version before encryption: the local account's passphrase is beside its password.
                try await device.account.setPassphrase(try local.account().passphrase)
            }
        }
        return device
    }

    /// Signs the device in to the local server's account, creating the account the first time.
    private static func signInLocally(_ device: ContactsDevice, _ local: LocalServer) async throws {
        let account = try local.account()
        do {
            try await device.account.signIn(
                username: account.username, password: account.password, passphrase: account.passphrase)
        } catch let error as SyncError where error.code == .notAuthenticated || error.code == .unknownItem {
            // The local account's recovery key is shown once and kept nowhere: not beside the passphrase.
            if let recoveryKey = try await device.account.signUp(
                username: account.username, password: account.password, passphrase: account.passphrase)
            {
                warn(
                    "made this machine's account; its recovery key opens your contacts if the data directory's passphrase is lost (shown this once, kept nowhere; write it down): \(recoveryKey.text)"
                )
            }
        }
    }

    /// This program, to start as the local server.
    /// The zero-setup server of `dataDirectory`, started when needed as this program's `server run --detach`.
    static func localServer(_ dataDirectory: String) -> LocalServer {
        LocalServer(
            dataDirectory: dataDirectory,
            launchCommand: [executablePath(), "server", "run", "--data-dir", dataDirectory, "--detach"])
    }

    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Brings what others changed before a command reads it; offline, says so and reads what is here.
    static func syncBeforeReading(_ device: ContactsDevice) async {
        do {
            try await device.sync()
            sayWarnings(device)
        } catch {
            warn("not synced, showing what this device knows: \(CLIWords.say(error, syncing: device))")
            sayWarnings(device)
        }
    }

    /// Sends what a command just saved, if the server answers; says so either way.
    static func syncAfterEdit(_ device: ContactsDevice) async {
        do {
            try await device.sync()
            sayWarnings(device)
        } catch {
            let pending = (try? device.reader.pendingCount()) ?? 0
            warn(
                "saved on this device; not synced yet (\(pending) change(s) pending): \(CLIWords.say(error, syncing: device))"
            )
            sayWarnings(device)
        }
    }
}

extension Session {
    /// Says, after a sync, that the server is older than this app needs, if it is (asked once per command);
    /// each account key that changed since the last command (once); and, at every command until the person
    /// verifies again, each verified key the server no longer gives.
    static func sayWarnings(_ device: ContactsDevice) {
        if let warning = device.status.serverWarning { warn("warning: " + warning.terminalSafe) }
        let refused = (try? device.reader.refusedKeys()) ?? []
        for notice in (try? device.reader.takeKeyNotices()) ?? []
        where !refused.contains(where: { $0.description == notice }) {
            warn("warning: " + notice.terminalSafe)
        }
        for change in refused { warn("KEY CHANGED: " + change.description.terminalSafe) }
    }
}

func warn(_ message: String) {
    FileHandle.standardError.write(Data("contacts: \(message)\n".utf8))
}

/// A failure that has been explained already: exit non-zero without usage text.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
