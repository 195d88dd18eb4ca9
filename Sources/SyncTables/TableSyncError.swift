/// What went wrong in the table sync, saying what to do.
public enum TableSyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A declared table cannot sync as it is: the reason and the fix.
    case schema(String)
    /// The sync is not running (never started, or stopped).
    case notStarted(String)
    /// A row cannot be shared or changed as asked.
    case refused(String)

    public var description: String {
        switch self {
        case .schema(let message): "cannot sync these tables: \(message)"
        case .notStarted(let message): message
        case .refused(let message): message
        }
    }
}
