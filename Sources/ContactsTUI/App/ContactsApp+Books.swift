import ContactsModel
import ContactsStore
import Foundation
import SyncCore

extension ContactsApp {
    /// Carries out an action of the books panel. Creating, renaming, deleting and leaving are local
    /// writes, synced like edits; sharing, unsharing and accepting talk to the server in a task. Each
    /// reports its outcome through the inbox.
    func performBookAction(_ effect: AppState.Effect) {
        let device = self.device
        let inbox = self.inbox
        @Sendable func book(_ zoneID: RecordZone.ID) throws -> AddressBook {
            guard let book = try device.reader.book(zoneID) else {
                throw DeviceError.noSuchBookOnDevice
            }
            return book
        }
        /// Runs `work` (in a task when it needs the server) and posts its outcome, or its error.
        @Sendable func report(_ work: @Sendable () async throws -> (text: String, invitation: String?)) async {
            do {
                let (text, invitation) = try await work()
                inbox.post(.bookActionFinished(AppState.Message(text), invitation: invitation))
            } catch {
                inbox.post(.bookActionFinished(AppState.Message(TUIWords.say(error), isError: true), invitation: nil))
            }
        }
        switch effect {
        case .createBook(let name):
            Task {
                await report {
                    let created = try device.books.createBook(named: name)
                    return ("Created the book \(created.name); it syncs by itself.", nil)
                }
            }
        case .renameBook(let zoneID, let name):
            Task {
                await report { ("Renamed to \(try device.books.renameBook(try book(zoneID), to: name).name).", nil) }
            }
        case .removeBook(let zoneID):
            Task {
                await report {
                    let removed = try book(zoneID)
                    if removed.isOwn {
                        try device.books.deleteBook(removed)
                        return ("Deleted the book \(removed.name) and its contacts, everywhere once synced.", nil)
                    }
                    try device.books.leaveBook(removed)
                    return ("Left the book \(removed.name).", nil)
                }
            }
        case .shareBook(let zoneID, let account, let readOnly):
            Task.detached {
                await report {
                    let shared = try book(zoneID)
                    let invitation = try await device.books.shareBook(shared, with: account, readOnly: readOnly)
                    let access = readOnly ? "read-only" : "read-write"
                    return (
                        "Shared \(shared.name) with \(account) (\(access)); give them the invitation below.",
                        String(describing: invitation)
                    )
                }
            }
        case .unshareBook(let zoneID, let account):
            Task.detached {
                await report {
                    let shared = try book(zoneID)
                    try await device.books.unshareBook(shared, from: account)
                    return ("\(shared.name) is no longer shared with \(account).", nil)
                }
            }
        case .acceptInvitation(let text):
            Task.detached {
                await report {
                    let accepted = try await device.books.acceptInvitation(text)
                    return ("Accepted \(accepted.name) from \(accepted.ownerUsername ?? "its owner").", nil)
                }
            }
        default:
            return
        }
    }
}
