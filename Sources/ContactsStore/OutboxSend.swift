import ContactsModel

/// How far one engine's send has read the outbox, and what it has sent that the server has not answered.
///
/// The outbox alone lists the record changes to send (the engines only hear that there are some), so
/// each send walks it in order, a batch at a time, from where the last batch stopped: a change answered
/// with a failure is not offered again in the same send, and one queued again (edited) moves to the end.
struct OutboxSend: Sendable {
    /// The last outbox row read.
    var cursor: Int64 = 0
    /// The outbox version of each change in a batch on its way, by outbox key: a confirmation settles
    /// only that version, and the item is not offered again until the batch is answered.
    var inFlight: [String: Int64] = [:]
}
