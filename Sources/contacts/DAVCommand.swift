import ArgumentParser
import ContactsDAV
import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation
import Listeners
import Logging
import ServiceLifecycle
import SyncServer
import UnixSignals

struct DAVCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dav",
        abstract: "Serve this machine's address books over CardDAV to phones, mail clients and khard.",
        discussion: """
            The sync server holds only ciphertext, so CardDAV is served here, from the decrypted contacts: \
            a bridge on 127.0.0.1 that DAV clients (vdirsyncer with khard, Thunderbird, Evolution and GNOME \
            Contacts, DAVx5) sync with. It runs a device of its own, 'dav' unless --device says otherwise, \
            which syncs with your other devices through the server as the full-screen app does (so both may \
            run at once): a card a client writes reaches them at once, and their edits reach the client's \
            next sync. Each book is an address book; a book shared with you to read only refuses writes.

            Clients sign in with the user 'contacts' and a password made on the first start, kept in the \
            data directory (0600) and shown by --show-credentials. Any address other than loopback needs \
            --tls-certificate and --tls-key. Stop with Ctrl-C.
            """,
        subcommands: [DAVMergeCommand.self])

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("The address to listen on, HOST:PORT.", valueName: "address"))
    var listen = "127.0.0.1:5233"

    @Option(help: ArgumentHelp("A PEM certificate chain, to serve over TLS.", valueName: "file"))
    var tlsCertificate: String?

    @Option(help: ArgumentHelp("The certificate's PEM private key.", valueName: "file"))
    var tlsKey: String?

    @Option(
        help: ArgumentHelp(
            "Which clients get each group as a card of its own (iPhone, macOS, DAVx5), not as CATEGORIES on its members: auto (by their User-Agent), always or never.",
            valueName: "when"))
    var groupCards = DAVBridge.GroupCards.auto

    @Flag(help: "Print the URL, user name and password for DAV clients, and exit.")
    var showCredentials = false

    func validate() throws {
        guard ListenAddress(listen) != nil else { throw ValidationError(BridgeError.badAddress(listen).description) }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError(BridgeError.tlsNeedsBoth.description)
        }
    }

    /// The device the bridge serves: `dav` unless `--device` was given.
    private var options: GlobalOptions {
        var options = global
        let named = CommandLine.arguments.contains { $0 == "--device" || $0.hasPrefix("--device=") }
        if !named { options.device = "dav" }
        return options
    }

    func run() async throws {
        let options = options
        let address = ListenAddress(listen)!
        let tls = tlsCertificate.map { TLSFiles(certificatePath: $0, keyPath: tlsKey!) }
        let server: DAVServer
        do {
            server = try DAVServer(address: address, tls: tls)
        } catch let error as BridgeError {
            throw CommandFailure(error.description)
        }
        try DataDirectory.prepare(options.dataDirectory)
        let credentials = try BridgeCredentials.load(dataDirectory: options.dataDirectory, device: options.device)
        let url = "\(tls == nil ? "http" : "https")://\(address)/"
        if showCredentials {
            print("URL:      \(url)")
            print("user:     \(credentials.username)")
            print("password: \(credentials.password)")
            return
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let logger = Logger(label: "contacts-dav")
        let device: ContactsDevice
        var offline: String?
        do {
            device = try await Session.open(options, needsServer: true, automaticallySync: true)
        } catch let error as DeviceLockError {
            throw CommandFailure(
                CLIWords.say(error)
                    + ". The bridge runs as a device of its own ('dav' by default) so that the full-screen app may stay open"
            )
        } catch {
            offline = CLIWords.say(error)
            device = try await Session.open(options, needsServer: false, automaticallySync: true)
        }
        let keeper =
            options.server == nil
            ? LocalServerKeeper(server: Session.localServer(options.dataDirectory), device: device) : nil
        let bridge = try DAVBridge(device: device, credentials: credentials, logger: logger, groupCards: groupCards)
        let bookList = try device.reader.books()
        let books = bookList.count
        let offlineNote = offline
        let service = try server.service(bridge: bridge, logger: logger) { port in
            let shown = "\(tls == nil ? "http" : "https")://\(ListenAddress(host: address.host, port: port))/"
            let line =
                "Serving \(books) address book\(books == 1 ? "" : "s") of device '\(options.device)' at \(shown) "
                + "(user \(credentials.username); `contacts dav --show-credentials` shows the password). Ctrl-C stops.\n"
            let offline = offlineNote.map {
                "Offline for now: \($0). Edits are kept and sent once the server answers.\n"
            }
            // macOS Contacts takes only the first book of an account: an account per book, at its principal.
            let perBook =
                books > 1
                ? "macOS Contacts, an account per book (server address):\n"
                    + bookList.map {
                        "  \($0.name.terminalSafe): \(shown)principals/\(DAVBridge.segment(of: $0))/\n"
                    }.joined() : ""
            // Written at once (print is buffered when stdout is a pipe): scripts wait for this line.
            FileHandle.standardOutput.write(Data((line + perBook + (offline ?? "")).utf8))
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await withTaskCancellationHandler {
            try await group.run()
        } onCancel: {
            Task { await group.triggerGracefulShutdown() }
        }
        _ = keeper
        await bridge.finishSending()
    }
}

extension DAVBridge.GroupCards: ExpressibleByArgument {}
