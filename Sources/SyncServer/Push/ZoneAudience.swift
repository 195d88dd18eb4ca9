import SyncCore

/// Everyone who can see a zone: its owner (in their private database) and the participants who
/// accepted its share (in their shared databases).
struct ZoneAudience {
    let store: any RecordStore
    let pushHub: PushHub

    /// Tells everyone who can see these zones of `owner` that they changed, but the device of
    /// `user` that changed them; and those in `formerly`, who could see them before the change.
    func notify(
        owner: String, zoneNames: Set<String>, by user: String, device: String?, formerly: Set<String> = []
    ) async {
        // The write happened: a failure to read who else to tell leaves them to their next fetch.
        let participants = ((try? await store.audience(owner: owner, zoneNames: zoneNames)) ?? []).union(formerly)
        await pushHub.notify(user: owner, scope: .private, excludingDevice: user == owner ? device : nil)
        for participant in participants.sorted() {
            await pushHub.notify(user: participant, scope: .shared, excludingDevice: participant == user ? device : nil)
        }
    }
}
