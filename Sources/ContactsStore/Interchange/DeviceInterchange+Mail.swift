import ContactsModel
import Foundation
import SyncCore

/// What `contacts add-from-mail` did with a message's sender.
public enum MailSenderOutcome: Sendable, Equatable {
    case added(Contact)
    /// A contact had the address but no name; it got the sender's.
    case named(Contact)
    /// A contact has the address already; nothing changed.
    case known(Contact)
}

extension DeviceInterchange {
    /// Adds a message's sender, or names the contact that has the address but no name of its own. A
    /// contact that has the address and a name is left as it is: a mail header never renames a person.
    public func addSender(_ sender: FromHeader, to book: RecordZone.ID? = nil) throws -> MailSenderOutcome {
        if var known = try store.contact(withEmail: sender.address) {
            let unnamed = known.name.compare(sender.address, options: .caseInsensitive) == .orderedSame
            guard unnamed, !sender.name.isEmpty else { return .known(known) }
            known.name = sender.name
            return .named(try device.contacts.update(known))
        }
        let name = sender.name.isEmpty ? sender.address : sender.name
        return .added(
            try device.contacts.add(
                Contact(name: name, emails: [LabeledValue(label: "", value: sender.address)]), to: book))
    }
}
