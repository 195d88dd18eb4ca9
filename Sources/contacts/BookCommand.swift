import ArgumentParser
import ContactsModel
import ContactsStore
import Foundation
import SyncClient
import SyncCore
import SyncCrypto

/// `contacts book …`: address books, and sharing them with other accounts on the same server.
struct BookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "book",
        abstract: "Address books: list, create, rename, delete; share them with other accounts.",
        discussion: """
            Every account has the book "Contacts"; `contacts add --book NAME` adds to another. A book \
            you share appears in the other account's books once they accept the invitation that \
            `contacts book share` prints; both of you see each other's changes. A book that two \
            owners named alike is written NAME@OWNER.

            Before sharing, compare safety numbers: each of you runs `contacts account fingerprint` and \
            reads it to the other, who records it with `contacts book verify BOOK PERSON NUMBER`; a key \
            that changes after that is refused.

            Example: contacts book create Family
                     contacts book share Family --with grace
                     contacts book invitations                        (on Grace's device)
                     contacts book accept ada                         (on Grace's device)
            """,
        subcommands: [
            List.self, Create.self, Rename.self, Delete.self, Share.self, Invitations.self, Accept.self, Decline.self,
            Cancel.self, Participants.self, Verify.self, Permission.self, Unshare.self, RotateKey.self, Leave.self,
        ])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the books on this device: name, contacts, owner, what you may do, who shares it.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: false)
            let counts = try device.reader.bookCounts()
            for book in try device.reader.books() {
                let columns = [
                    book.name.terminalSafe, contactCount(counts[book.zoneID] ?? 0), book.ownerText,
                    book.accessText, book.sharingText,
                ]
                print(columns.joined(separator: "\t"))
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a book, then sync it.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The book's name, such as Family.") var name: String
        @OptionGroup var edit: EditSyncOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: edit.syncs)
            let book = try device.books.createBook(named: name)
            print("created \"\(book.name.terminalSafe)\"")
            await edit.syncAfterEdit(device)
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rename",
            abstract: "Rename a book (yours, or one shared with you read-write); everyone who has it sees the name.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The book's name now.") var name: String
        @Argument(help: "Its new name.") var newName: String
        @OptionGroup var edit: EditSyncOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: edit.syncs)
            let book = try device.books.renameBook(try device.reader.resolveBook(name), to: newName)
            print("renamed to \"\(book.name.terminalSafe)\"")
            await edit.syncAfterEdit(device)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete one of your books and its contacts, on every device and for everyone it is shared with.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The book's name.") var name: String
        @Flag(help: "Confirm: the book's contacts are deleted everywhere.") var yes = false
        @OptionGroup var edit: EditSyncOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: edit.syncs)
            let book = try device.reader.resolveBook(name)
            let count = try device.reader.bookCounts()[book.zoneID] ?? 0
            guard yes else {
                throw CommandFailure(
                    "deleting \"\(book.name.terminalSafe)\" deletes its \(count) contact(s) on every device and for everyone it is shared with: run again with --yes to confirm"
                )
            }
            try device.books.deleteBook(book)
            print("deleted \"\(book.name.terminalSafe)\" and its \(count) contact(s)")
            await edit.syncAfterEdit(device)
        }
    }

    struct Share: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "share",
            abstract: "Share one of your books with an account; prints the invitation to hand them.",
            discussion: """
                Only the invitation goes to standard output (explanations go to standard error), so a \
                script can capture it. The invitation holds no key: the book's keys are wrapped to the \
                account's public key, so only that account can open them. The account must have synced \
                once with its passphrase.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The book's name.") var name: String
        @Option(help: "The account to share it with.") var with: String
        @Flag(help: "They may read the book but not change it.") var readOnly = false

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            let book = try device.reader.resolveBook(name)
            let invitation = try await device.books.shareBook(book, with: with, readOnly: readOnly)
            warn(
                "shared \"\(book.name.terminalSafe)\" with \(with.terminalSafe) (\(readOnly ? "read-only" : "read-write")); they accept it with: contacts book accept INVITATION"
            )
            print(invitation.description)
        }
    }

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "accept",
            abstract: "Accept a book someone shared with you (their invitation, or their name), then sync it.",
            discussion: """
                `contacts book invitations` lists what waits for you, with each sender's safety number: \
                compare it with them first. A sender whose verified key changed is refused.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The invitation, as `contacts book share` printed it, or the account that sent it.")
        var invitation: String

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            var text = invitation
            if (try? ShareInvitation(invitation)) == nil {
                let waiting = try await device.books.receivedInvitation(invitation)
                warn(
                    "\(waiting.owner.terminalSafe)'s safety number: \(waiting.ownerFingerprint?.safetyNumber ?? "none") (\(waiting.ownerTrust.text))"
                )
                text = waiting.invitation.description
            }
            let book = try await device.books.acceptInvitation(text)
            Session.sayWarnings(device)
            let count = try device.reader.bookCounts()[book.zoneID] ?? 0
            print(
                "accepted \"\(book.name.terminalSafe)\" from \(book.ownerText) (\(book.accessText), \(contactCount(count)))"
            )
        }
    }

    struct Participants: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "participants",
            abstract:
                "Who has a book: each account, what they may do, whether they accepted, their safety number and whether you verified it."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The book's name.") var name: String
        @Flag(help: "Show what this device knows without syncing first.") var noSync = false

        func run() async throws {
            let device = try await Session.open(global, needsServer: !noSync)
            if !noSync { await Session.syncBeforeReading(device) }
            let book = try device.reader.resolveBook(name)
            guard !book.participants.isEmpty else {
                print("\"\(book.name.terminalSafe)\" is not shared")
                return
            }
            let keys = try await device.books.personKeys(of: book, online: !noSync)
            for participant in book.participants {
                let key = keys.first { $0.participant.userRecordName == participant.userRecordName }
                let columns = [
                    participant.username.terminalSafe,
                    participant.role == .owner ? "owner" : participant.permission.text,
                    participant.acceptanceStatus.rawValue,
                    key.map { $0.fingerprint?.safetyNumber ?? "no key" } ?? "you",
                    key?.trust.text ?? "",
                ]
                print(columns.joined(separator: "\t"))
            }
        }
    }

    struct Unshare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unshare",
            abstract:
                "Stop sharing one of your books with an account; it disappears from their devices, and the book gets a new key."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The book's name.") var name: String
        @Argument(help: "The account to remove.") var account: String

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            let book = try device.reader.resolveBook(name)
            try await device.books.unshareBook(book, from: account)
            print("\"\(book.name.terminalSafe)\" is no longer shared with \(account.terminalSafe)")
        }
    }

    struct RotateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Give one of your books a new key; only the people it is shared with now receive it.",
            discussion: """
                What is written to the book from now on is sealed with the new key. Contacts already in it \
                keep their key until they are next edited; nothing is encrypted again in bulk. Removing \
                someone (`contacts book unshare`) and someone leaving do this by themselves.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The book's name.") var name: String

        func run() async throws {
            let device = try await Session.open(global, needsServer: true)
            let book = try device.reader.resolveBook(name)
            let version = try await device.books.rotateBookKey(book)
            print("\"\(book.name.terminalSafe)\" has a new key (version \(version))")
        }
    }

    struct Leave: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "leave",
            abstract: "Leave a book someone shares with you; it disappears from your devices.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The book's name.") var name: String
        @OptionGroup var edit: EditSyncOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: edit.syncs)
            let book = try device.reader.resolveBook(name)
            try device.books.leaveBook(book)
            print("left \"\(book.name.terminalSafe)\"")
            await edit.syncAfterEdit(device)
        }
    }
}

/// "1 contact", "3 contacts".
func contactCount(_ count: Int) -> String { count == 1 ? "1 contact" : "\(count) contacts" }

extension AddressBook {
    /// Who owns the book, for people to read.
    var ownerText: String { isOwn ? "yours" : (ownerUsername ?? "shared with you").terminalSafe }

    var accessText: String {
        switch access {
        case .owner: "owner"
        case .readWrite: "read-write"
        case .readOnly: "read-only"
        }
    }

    /// Whom one's own book is shared with, or nothing.
    var sharingText: String {
        let others = sharedWith
        guard isOwn, !others.isEmpty else { return "" }
        return "shared with " + others.map { $0.username.terminalSafe }.joined(separator: ", ")
    }
}
