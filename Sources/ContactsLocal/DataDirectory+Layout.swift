/// Where everything in the app's data directory is: the one place its layout is written.
///
/// ```
/// <data-dir>/devices/<device>.sqlite          a device's store (its -wal, -shm beside it)
/// <data-dir>/devices/<device>.sqlite.lock     held by the process that has the device open
/// <data-dir>/devices/<device>.dav-password    the CardDAV bridge's password for the device (0600)
/// <data-dir>/local-account                    the local account's name, password and passphrase
/// <data-dir>/server/sync.sock                 the local server's socket
/// <data-dir>/server/server.sqlite             its storage (and server.sqlite.lock while it runs)
/// <data-dir>/server/server.log, start.lock, stopped
/// ```
extension DataDirectory {
    /// The device a command uses when it names none (`--device`).
    public static let defaultDevice = "default"

    /// The layout of the data directory at `path`.
    public struct Layout: Sendable, Hashable {
        public let path: String

        public init(_ path: String) {
            self.path = path
        }

        /// The folder of the devices' files.
        public var devices: String { path + "/devices" }
        /// A device's store.
        public func deviceFile(_ device: String) -> String { devices + "/\(device).sqlite" }
        /// Held by the process that has the device open.
        public func deviceLock(_ device: String) -> String { deviceFile(device) + ".lock" }
        /// The CardDAV bridge's password for the device.
        public func davPassword(_ device: String) -> String { devices + "/\(device).dav-password" }
        /// The local account's name, password and passphrase.
        public var localAccount: String { path + "/local-account" }

        /// The local server's folder.
        public var server: String { path + "/server" }
        /// The socket the local server listens on.
        public var serverSocket: String { server + "/sync.sock" }
        public var serverStorage: String { server + "/server.sqlite" }
        /// Held by the local server for as long as it runs (the server locks its storage).
        public var serverStorageLock: String { serverStorage + ".lock" }
        public var serverLog: String { server + "/server.log" }
        /// Held by whoever decides whether to start or stop the local server.
        public var serverStartLock: String { server + "/start.lock" }
        /// Present after `contacts server stop`.
        public var serverStopMarker: String { server + "/stopped" }
        /// Where versions before the socket saved the server's TCP port and process ID.
        public var legacyServerAddress: String { server + "/address" }

        /// Whether `name`, in ``devices``, is one of a device's store files (the store, its log or its
        /// shared memory).
        public static func isDeviceStore(_ name: String) -> Bool {
            name.hasSuffix(".sqlite") || name.contains(".sqlite-")
        }
    }
}
