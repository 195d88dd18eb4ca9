import SyncCore

/// Checks a request before anything is read or written, so that bad input changes nothing.
/// Every check throws a ``SyncError`` whose message names the offending item.
public enum RequestValidation {
    /// Checks a zone ID: a valid name, owned by the signed-in user (`owner`; nil in the shared
    /// database, whose zones belong to others and are checked against the user's shares).
    public static func validate(_ zoneID: RecordZone.ID, owner: String?, context: @autoclosure () -> String) throws {
        if let problem = NameRules.problem(withName: zoneID.zoneName, kind: "zone name") {
            throw SyncError(.invalidArguments, "\(context()): \(problem)")
        }
        guard let owner else {
            // In the shared database a zone is named with its owner's user record name.
            if zoneID.ownerName.isEmpty || zoneID.ownerName.utf8.count > NameRules.maximumNameBytes {
                throw SyncError(
                    .invalidArguments,
                    "\(context()): ownerName must be 1 to \(NameRules.maximumNameBytes) bytes: the user record name of the zone's owner"
                )
            }
            return
        }
        guard zoneID.ownerName == RecordZone.ID.defaultOwnerName || zoneID.ownerName == owner else {
            throw SyncError(
                .permissionFailure,
                "\(context()): zone '\(zoneID.zoneName)' belongs to another user ('\(zoneID.ownerName)'); you can only change your own zones"
            )
        }
    }

    /// Checks a record ID and its zone.
    public static func validate(_ recordID: RecordValue.ID, owner: String?, context: @autoclosure () -> String) throws {
        try validate(recordID.zoneID, owner: owner, context: context())
        if let problem = NameRules.problem(withName: recordID.recordName, kind: "record name") {
            throw SyncError(.invalidArguments, "\(context()): \(problem)")
        }
    }

    /// Checks the count of items against the server's limit.
    public static func validate(itemCount: Int, limits: ServerLimits) throws {
        if itemCount > limits.maximumItemsPerRequest {
            throw SyncError(
                .limitExceeded,
                "the request holds \(itemCount) items; the limit is \(limits.maximumItemsPerRequest) per request: split it into smaller batches"
            )
        }
    }

    /// Checks a request's `desiredKeys`: each a field key.
    public static func validate(desiredKeys: [String]?) throws {
        for (index, key) in (desiredKeys ?? []).enumerated() {
            if let problem = NameRules.problem(withIdentifier: key, kind: "field key") {
                throw SyncError(.invalidArguments, "desiredKeys[\(index)]: \(problem)")
            }
        }
    }

    /// Checks a record modification: names, types, field values, duplicates and counts; zones must
    /// be `owner`'s unless it is nil (the shared database).
    public static func validate(_ request: ModifyRecordsRequest, owner: String?, limits: ServerLimits) throws {
        try validate(itemCount: request.saves.count + request.deletes.count, limits: limits)
        if let requestID = request.clientRequestID, requestID.isEmpty || requestID.utf8.count > 255 {
            throw SyncError(.invalidArguments, "clientRequestID must be 1 to 255 bytes long")
        }
        try validate(desiredKeys: request.desiredKeys)
        var seen = Set<RecordKey>(minimumCapacity: request.saves.count + request.deletes.count)
        for (index, record) in request.saves.enumerated() {
            // Made only for a message (an autoclosure): interpolating it for every record was a cost of its own.
            try validate(record: record, owner: owner, context: "saves[\(index)]")
            guard seen.insert(RecordKey(record.recordID)).inserted else {
                throw SyncError(
                    .invalidArguments,
                    "saves[\(index)]: record '\(record.recordID.recordName)' appears twice in one request; send it once"
                )
            }
        }
        for (index, recordID) in request.deletes.enumerated() {
            try validate(recordID, owner: owner, context: "deletes[\(index)]")
            guard seen.insert(RecordKey(recordID)).inserted else {
                throw SyncError(
                    .invalidArguments,
                    "deletes[\(index)]: record '\(recordID.recordName)' appears twice in one request (saved and deleted?); send it once"
                )
            }
        }
    }

    /// Checks a record to save: its ID, type, field keys and values, and parent.
    public static func validate(record: RecordValue, owner: String?, context: @autoclosure () -> String) throws {
        try validate(record.recordID, owner: owner, context: context())
        if let problem = NameRules.problem(withIdentifier: record.recordType, kind: "record type") {
            throw SyncError(.invalidArguments, "\(context()): \(problem)")
        }
        // Linear in the keys (a record may have tens of thousands); of several bad keys, the
        // first in sorted order is reported, so the answer does not depend on hashing order.
        let badKeys =
            record.fields.keys.filter { NameRules.problem(withIdentifier: $0, kind: "") != nil }
            + record.changedKeys.filter { NameRules.problem(withIdentifier: $0, kind: "") != nil }
        if let key = badKeys.min(), let problem = NameRules.problem(withIdentifier: key, kind: "field key") {
            throw SyncError(.invalidArguments, "\(context()): \(problem)")
        }
        for (key, value) in record.fields {
            try validate(value, owner: owner, context: "\(context()).fields.\(key)", allowList: true)
        }
        if let parent = record.parent {
            try validate(parent: parent, of: record.recordID, owner: owner, context: "\(context()).parent")
        }
    }

    /// A parent is a record of the same zone, as in CloudKit (in the private database, a zone may be
    /// named with the default owner name or the owner's own).
    private static func validate(
        parent: RecordValue.Reference, of recordID: RecordValue.ID, owner: String?, context: String
    ) throws {
        if let problem = NameRules.problem(withName: parent.recordID.recordName, kind: "parent record name") {
            throw SyncError(.invalidArguments, "\(context): \(problem)")
        }
        let own = [RecordZone.ID.defaultOwnerName, owner]
        let sameOwner =
            parent.recordID.zoneID.ownerName == recordID.zoneID.ownerName
            || (owner != nil && own.contains(parent.recordID.zoneID.ownerName))
        guard parent.recordID.zoneID.zoneName == recordID.zoneID.zoneName, sameOwner else {
            throw SyncError(
                .invalidArguments,
                "\(context): the parent must be a record of the same zone ('\(recordID.zoneID.zoneName)' of '\(recordID.zoneID.ownerName)'), not of '\(parent.recordID.zoneID.zoneName)' of '\(parent.recordID.zoneID.ownerName)'"
            )
        }
    }

    private static func validate(
        _ value: FieldValue, owner: String?, context: @autoclosure () -> String, allowList: Bool
    ) throws {
        switch value {
        case .reference(let reference):
            if let problem = NameRules.problem(withName: reference.recordID.recordName, kind: "referenced record name")
                ?? NameRules.problem(withName: reference.recordID.zoneID.zoneName, kind: "referenced zone name")
            {
                throw SyncError(.invalidArguments, "\(context()): \(problem)")
            }
        case .list(let elements):
            guard allowList else {
                throw SyncError(.invalidArguments, "\(context()): a list cannot hold another list")
            }
            // Each encrypted value is sealed with its record ID and field key as associated data:
            // one field, one sealed value. A list to encrypt is sealed whole, as one value.
            if elements.contains(where: { $0.encryptedValue != nil }) {
                throw SyncError(
                    .invalidArguments,
                    "\(context()): a list cannot hold an encrypted value; encrypt the whole field as one encrypted value"
                )
            }
            if let first = elements.first, let other = elements.first(where: { $0.typeName != first.typeName }) {
                throw SyncError(
                    .invalidArguments,
                    "\(context()): a list holds one type of value, but this one mixes \(first.typeName) and \(other.typeName)"
                )
            }
            for element in elements {
                try validate(element, owner: owner, context: context(), allowList: false)
            }
        case .asset(let asset):
            if let problem = asset.problem { throw SyncError(.invalidArguments, "\(context()): \(problem)") }
        case .double(let number) where !number.isFinite:
            throw SyncError(.invalidArguments, "\(context()): a double must be a finite number")
        default:
            break
        }
    }
}
