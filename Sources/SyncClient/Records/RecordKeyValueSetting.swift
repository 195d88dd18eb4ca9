import SyncCore

/// Reads and writes a record's fields by key: the counterpart of `CKRecordKeyValueSetting`,
/// the type of ``Record/encryptedValues``.
public protocol RecordKeyValueSetting: AnyObject, Sendable {
    /// Reads or writes a value; writing `nil` removes it.
    subscript(key: Record.FieldKey) -> (any RecordValueProtocol)? { get set }
    /// The keys that hold a value.
    func allKeys() -> [Record.FieldKey]
    /// The keys set or removed since the record was created or last came from the server.
    func changedKeys() -> [Record.FieldKey]
}

/// A record's encrypted values, read and written through the record itself.
final class EncryptedValues: RecordKeyValueSetting {
    let record: Record

    init(record: Record) {
        self.record = record
    }

    subscript(key: Record.FieldKey) -> (any RecordValueProtocol)? {
        get { record.update { $0[encrypted: key] }?.recordValue }
        set { record.update { $0[encrypted: key] = newValue?.recordFieldValue } }
    }

    func allKeys() -> [Record.FieldKey] { record.update { $0.encryptedValues.keys.sorted() } }

    func changedKeys() -> [Record.FieldKey] {
        record.update { value in value.changedKeys.filter { value.encryptedValues.keys.contains($0) }.sorted() }
    }
}
