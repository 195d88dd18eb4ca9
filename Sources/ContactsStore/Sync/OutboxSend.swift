import ContactsModel

/// How far one engine's send has read the outbox, and what it has sent that the server has not answered.
///
/// The outbox alone lists the record changes to send (the engines only hear that there are some), so
/// each send walks it in the order of its keys, a batch at a time, from where the last batch stopped
/// (``ContactStore/nextBatch(after:in:device:maximumCount:skipping:where:)`` says why that order): a change
/// answered with a failure is not offered again in the same send, and one queued again (edited) during
/// the send is offered again if the walk has not passed it yet, otherwise by the next send, which the
/// engine is told to make (`hasPendingUntrackedChanges`).
struct OutboxSend: Sendable {
    /// The last outbox key read; record changes' keys all come after this one.
    var cursor = "record:"
    /// The outbox version of each change in a batch on its way, by outbox key: a confirmation settles
    /// only that version, and the item is not offered again until the batch is answered.
    var inFlight: [String: Int64] = [:]
}
