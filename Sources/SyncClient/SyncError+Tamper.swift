import SyncCore

extension SyncError.Code {
    /// A fetched record failed the checks of its sealed record type (``SealedRecordTypes``): a plain value
    /// where a sealed one belongs, a sealed value that does not open for its place, or an older version than
    /// this device has seen. The client library's own code, never sent by a server: CloudKit has none,
    /// because its server is trusted; here the server is not. The ``SyncError/reason`` says which check failed.
    public static let recordTampered = SyncError.Code(rawValue: "recordTampered")
}

extension SyncError.Reason {
    /// `recordTampered`: a user field of a sealed record type arrived in plain (a forgery: a device of the
    /// account seals every such field before it leaves).
    public static let plainField = SyncError.Reason(rawValue: "plainField")
    /// `recordTampered`: a sealed value does not open for its field, record, record type and zone with the
    /// zone's key (altered, or copied from elsewhere), or its seals disagree on the record's version.
    public static let doesNotOpen = SyncError.Reason(rawValue: "doesNotOpen")
    /// `recordTampered`: the record's sealed version is below one this device has seen (an older value
    /// served again).
    public static let rollback = SyncError.Reason(rawValue: "rollback")
}

extension SyncError {
    /// A `recordTampered` error for `recordID`, for `reason`, saying `what` was wrong.
    static func tampered(_ recordID: RecordValue.ID, recordType: String, _ reason: Reason, _ what: String) -> SyncError
    {
        var error = SyncError(
            .recordTampered,
            "\(recordType) record \(recordID) was refused as tampered: \(what); it was not applied, and this device "
                + "keeps its own copy")
        error.reason = reason
        return error
    }
}
