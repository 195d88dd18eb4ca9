import SyncCore

/// The record types an app declares always sealed, and which of their fields: CloudKit never lets an
/// `encryptedValues` key hold a plain value, and neither does this library.
///
/// For a declared type, a fetched record with a plain value where a sealed one belongs, a sealed value that
/// does not open, or a version below one the app has seen, is never handed to the app as data: it is reported
/// as a failed fetch with `recordTampered` (see ``SyncError/Code/recordTampered``). A save of a declared type
/// with a plain value where a sealed one belongs is refused before it leaves the device.
///
/// ```swift
/// let sealed = SealedRecordTypes(["Contact": .all, "Note": .fields(["title", "body"])])
/// ```
public struct SealedRecordTypes: Sendable, Hashable {
    /// Which fields of a type are sealed.
    public enum Fields: Sendable, Hashable {
        /// Every user field: the record holds no plain field at all.
        case all
        /// These fields; others may be plain.
        case fields(Set<String>)

        /// Whether `key` is one of them.
        public func contains(_ key: String) -> Bool {
            switch self {
            case .all: true
            case .fields(let keys): keys.contains(key)
            }
        }
    }

    /// The declared types and their sealed fields, by record type.
    public var types: [String: Fields]

    /// Declares `types`.
    public init(_ types: [String: Fields] = [:]) {
        self.types = types
    }

    /// No type declared: every record is handed over as it arrives (its sealed values opened).
    public static let none = SealedRecordTypes()

    /// The sealed fields of `recordType`, nil when it is not declared.
    public func fields(of recordType: String) -> Fields? {
        types[recordType]
    }

    /// Whether `recordType` is declared.
    public func contains(_ recordType: String) -> Bool {
        types[recordType] != nil
    }

    /// The first field of `record` that holds a plain value where its type's sealed one belongs (sorted, so
    /// the report is the same each time); nil when there is none or the type is not declared. For a record as
    /// it arrived (sealed values not yet opened), and for one about to be sealed (plain values in ``RecordValue/fields``,
    /// those to seal in ``RecordValue/encryptedValues``) alike.
    func plainField(in record: RecordValue) -> String? {
        guard let fields = fields(of: record.recordType) else { return nil }
        // An asset stays a plain value the server reads (its ID and size); its key is sealed (``RecordSeal``).
        return record.fields.filter { key, value in
            value.encryptedValue == nil && fields.contains(key)
                && !(value.namesAsset && value.assetReferences.allSatisfy { $0.key != nil })
        }.keys.min()
    }
}
