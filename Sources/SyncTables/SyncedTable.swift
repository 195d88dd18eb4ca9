import Foundation
import GRDB

/// A table of the app's database that syncs: each row is a record of the same name in the account's zone,
/// each column a field. Declare the tables when making a ``TableSync``:
///
/// ```swift
/// let sync = try TableSync(
///     database: dbQueue,
///     tables: [
///         SyncedTable("note", encryptedColumns: ["body"], conflicts: .threeWayMerge),
///         SyncedTable("tag"),
///         SyncedTable("noteTag"),
///     ],
///     container: container)
/// ```
///
/// The table's primary key must be one `TEXT` (or `UUID`) column: integer keys collide across devices.
/// A foreign key to another synced table becomes a reference; with `ON DELETE CASCADE` the reference
/// deletes its record on the server too (`deleteSelf`).
public struct SyncedTable: Sendable, Hashable {
    /// The table's name in the app's database.
    public var name: String
    /// The records' type on the server; by default the table's name.
    public var recordType: String
    /// Columns whose values are sealed on the device (`encryptedValues`): the server never reads them.
    public var encryptedColumns: Set<String>
    /// How a row changed on this device and on the server since the device last saw it is settled.
    public var conflicts: ConflictPolicy
    /// The foreign-key column whose row is this row's `parent`: shared with it when it is shared.
    /// By default the table's only foreign key to a synced table, if it has exactly one.
    public var parentColumn: String?
    /// Columns left out of sync (device-local state such as a scroll position).
    public var localColumns: Set<String>

    public init(
        _ name: String, recordType: String? = nil, encryptedColumns: Set<String> = [],
        conflicts: ConflictPolicy = .lastEditPerField, parentColumn: String? = nil, localColumns: Set<String> = []
    ) {
        self.name = name
        self.recordType = recordType ?? name
        self.encryptedColumns = encryptedColumns
        self.conflicts = conflicts
        self.parentColumn = parentColumn
        self.localColumns = localColumns
    }
}

/// How a conflict between this device's row and the server's record is settled, column by column,
/// against the ancestor: the record as this device last saw it. A column changed on one side only takes
/// that side's value under every policy; the policies differ where both sides changed it. Whatever a
/// policy overwrites is kept in the conflict log (``TableSync/conflictLog()``).
public enum ConflictPolicy: Sendable, Hashable {
    /// The later edit of each column wins, by the server's clock: the server's record by its modification
    /// date, this device's edit by when it was made, corrected by this device's offset from the server's
    /// clock (learned from each answer).
    case lastEditPerField
    /// Text changed on both sides is merged line by line where the edits touch different lines (a
    /// three-way merge against the ancestor); other values changed on both sides fall back to
    /// ``lastEditPerField``.
    case threeWayMerge
    /// The app decides: given the ancestor, this device's row and the server's, it returns the row to keep.
    case custom(ConflictResolver)

    public static func == (lhs: ConflictPolicy, rhs: ConflictPolicy) -> Bool {
        switch (lhs, rhs) {
        case (.lastEditPerField, .lastEditPerField), (.threeWayMerge, .threeWayMerge): true
        case (.custom(let a), .custom(let b)): a.name == b.name
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .lastEditPerField: hasher.combine(0)
        case .threeWayMerge: hasher.combine(1)
        case .custom(let resolver): hasher.combine(resolver.name)
        }
    }

    /// The policy's name in the conflict log.
    var name: String {
        switch self {
        case .lastEditPerField: "lastEditPerField"
        case .threeWayMerge: "threeWayMerge"
        case .custom(let resolver): "custom(\(resolver.name))"
        }
    }
}

/// An app's own merge: a name for the conflict log and a function from a conflict to the row to keep.
public struct ConflictResolver: Sendable {
    public let name: String
    public let resolve: @Sendable (RowConflict) -> [String: DatabaseValue]

    public init(_ name: String, resolve: @escaping @Sendable (RowConflict) -> [String: DatabaseValue]) {
        self.name = name
        self.resolve = resolve
    }
}

/// A row changed on this device and on the server since this device last saw it.
public struct RowConflict: Sendable {
    /// The table.
    public let table: String
    /// The row's primary key (its record name).
    public let recordName: String
    /// The row as this device last saw it from the server; `nil` when this device never saw it.
    public let ancestor: [String: DatabaseValue]?
    /// The row on this device, with its unsent changes.
    public let client: [String: DatabaseValue]
    /// The row as the server has it now.
    public let server: [String: DatabaseValue]
    /// When this device's change was made, by the server's clock (as well as this device can tell).
    public let clientEditedAt: Date
    /// When the server's record was last saved, by the server's clock.
    public let serverModifiedAt: Date?
}
