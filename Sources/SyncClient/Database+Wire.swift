import SyncCore

/// Where records cross between the app's ``Record`` objects and the wire's ``RecordValue``s: the
/// one place that seals `encryptedValues` before they leave and opens them when they arrive.
extension Database {
    /// The records as they go on the wire.
    package func outgoing(_ records: [Record]) async throws -> [RecordValue] {
        let values = records.map(\.value)
        if let record = values.first(where: { !$0.encryptedValues.isEmpty }) {
            throw SyncError(
                .invalidArguments,
                "\(record.recordID) has encryptedValues, and this database has no encryption key: set up the account's passphrase before saving encrypted values"
            )
        }
        return values
    }

    /// Records that came from the server, as the app sees them.
    package func incoming(_ values: [RecordValue]) async throws -> [Record] {
        values.map(Record.init)
    }

    /// An error that came from the server, with its server record as the app sees it.
    package func incoming(_ error: SyncError) async -> SyncError {
        error
    }
}
