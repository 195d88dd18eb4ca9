import ArgumentParser
import ContactsStore

/// The option every command that edits shares: whether to sync the edit at once (the default) or leave it
/// on this device for a later sync.
struct EditSyncOptions: ParsableArguments {
    @Flag(help: "Save on this device only; sync later.") var noSync = false

    /// Whether the command needs the server: only when it syncs the edit.
    var syncs: Bool { !noSync }

    /// Syncs the edit just saved on `device`, unless `--no-sync` was given. A sync that fails leaves the edit
    /// saved and pending, says so, and does not fail the command.
    func syncAfterEdit(_ device: ContactsDevice) async {
        guard syncs else { return }
        await Session.syncAfterEdit(device)
    }
}
