import Foundation
import SyncCore

/// Where records cross between the app's ``Record`` objects and the wire's ``RecordValue``s: the
/// one place that seals `encryptedValues` before they leave and opens them when they arrive, and that
/// holds records of sealed types (``SealedRecordTypes``) to their checks both ways.
extension Database {
    /// Saves and deletes records in one request sent through `exchange`, with encrypted values
    /// sealed first. A record whose zone does not exist cannot be sealed (the zone holds its key):
    /// it fails with `zoneNotFound`, as the server would answer it, and the rest are sent. So does a record
    /// of a sealed type with a plain value where a sealed one belongs, with `invalidArguments`.
    ///
    /// With `keepingSentFields` (not for the `changedKeys` policy, whose saves the server merges with
    /// what it holds), the server answers with system fields only (`desiredKeys` empty) and each saved
    /// record is the one sent with the server's system fields: what the server stored, without
    /// sending every field back to be read and opened again.
    package func modifyRecords(
        saving records: [Record], deleting recordIDs: [RecordValue.ID], savePolicy: SavePolicy, atomically: Bool,
        keepingSentFields: Bool = false,
        through exchange: (ModifyRecordsRequest) async throws -> ModifyRecordsResponse
    ) async throws -> ModifyRecordsResponse {
        let keepingSentFields = keepingSentFields && savePolicy != .changedKeys
        var saves: [RecordValue] = []
        saves.reserveCapacity(records.count)
        var kept: [RecordValue.ID: RecordValue] = [:]
        var sent: [RecordValue.ID: (sealed: RecordValue, plain: RecordValue)] = [:]
        var unsealed: [ModifyRecordsResponse.FailedRecordSave] = []
        var uploaded: [RecordValue] = []
        for (value, error) in try await uploadingAssets(records.map(\.value)) {
            if let error {
                unsealed.append(.init(recordID: value.recordID, error: error))
            } else {
                uploaded.append(value)
            }
        }
        let sealing = try await ConcurrentMap.map(uploaded) { plain in
            do {
                return (plain, Result<RecordValue, SyncError>.success(try await self.outgoing(plain)))
            } catch let error as SyncError where error.code == .zoneNotFound || error.code == .invalidArguments {
                return (plain, .failure(error))
            }
        }
        for (value, outcome) in sealing {
            switch outcome {
            case .success(let sealed):
                saves.append(sealed)
                if keepingSentFields {
                    var value = value
                    value.sealedVersion = sealed.sealedVersion
                    // Asset keys as sealed: every record read goes through their opening and its checks.
                    for (key, field) in sealed.fields where field.namesAsset {
                        value.replaceWithoutChange(field: key, by: field)
                    }
                    kept[value.recordID] = value
                } else if RecordSeal.needsSealing(value) {
                    sent[value.recordID] = (sealed, value)
                }
            case .failure(let error):
                unsealed.append(.init(recordID: value.recordID, error: error))
            }
        }
        var response = ModifyRecordsResponse()
        if !saves.isEmpty || !recordIDs.isEmpty {
            response = try await exchange(
                ModifyRecordsRequest(
                    saves: saves, deletes: recordIDs, savePolicy: savePolicy, atomic: atomically,
                    clientRequestID: UUID().uuidString, desiredKeys: keepingSentFields ? [] : nil))
        }
        response.savedRecords = response.savedRecords.map { saved in
            if let sentValue = kept[saved.recordID] { return Self.stored(sentValue, as: saved) }
            return sent[saved.recordID].flatMap { Self.reopened(saved, sent: $0) } ?? saved
        }
        response.failedRecordSaves += unsealed
        keyring?.forget(
            zoneIDs: response.failedRecordSaves.filter { $0.error.code == .zoneNotFound }.map(\.recordID.zoneID))
        return response
    }

    /// A record as sent, with the system fields the server gave it when it stored it.
    private static func stored(_ sent: RecordValue, as saved: RecordValue) -> RecordValue {
        var record = sent
        record.recordChangeTag = saved.recordChangeTag
        record.creationDate = saved.creationDate
        record.modificationDate = saved.modificationDate
        record.creatorUserRecordID = saved.creatorUserRecordID
        record.lastModifiedUserRecordID = saved.lastModifiedUserRecordID
        record.parent = saved.parent
        record.share = saved.share
        record.clearChangedKeys()
        return record
    }

    /// A saved record as the server answered it, with the encrypted values this device just sent in place
    /// of their ciphertexts when the server kept exactly those ciphertexts: nothing to open, so a large
    /// upload does not decrypt everything it encrypted. Nil when any encrypted field differs.
    private static func reopened(_ saved: RecordValue, sent: (sealed: RecordValue, plain: RecordValue)) -> RecordValue?
    {
        var reopened = saved
        for (key, value) in saved.fields where value.encryptedValue != nil {
            guard sent.sealed.fields[key] == value, let plaintext = sent.plain.encryptedValues[key] else { return nil }
            reopened.replaceWithoutChange(field: key, by: nil)
            reopened.replaceWithoutChange(encrypted: key, by: plaintext)
        }
        reopened.sealedVersion = sent.sealed.sealedVersion
        return reopened
    }

    /// The record as it goes on the wire: encrypted values sealed, never in plaintext. A record of a sealed
    /// type with a plain value where a sealed one belongs is refused here, before it leaves.
    package func outgoing(_ value: RecordValue) async throws -> RecordValue {
        if let field = sealedRecordTypes.plainField(in: value) {
            throw SyncError(
                .invalidArguments,
                "\(value.recordType) record \(value.recordID) holds field '\(field)' in plain, but the app declared "
                    + "\(value.recordType) records sealed: set it through encryptedValues, so that it is encrypted "
                    + "before it leaves this device")
        }
        guard RecordSeal.needsSealing(value) else { return value }
        guard let keyring else { throw Self.noPassphrase(value.recordID) }
        return try await keyring.seal(
            value, declared: sealedRecordTypes.contains(value.recordType), client: DatabaseClient(database: self))
    }

    /// Records that came from the server, with their encrypted values opened; throws at the first that does
    /// not open or fails its sealed type's checks. For what the app did not ask to read (a save's answer).
    package func incoming(_ values: [RecordValue]) async throws -> [Record] {
        try await ConcurrentMap.map(values) { try await self.opened($0, seenVersion: nil) }.map(Record.init)
    }

    /// Records that came from the server, each opened and checked on its own: one that does not open, or of a
    /// sealed type that fails its checks, comes back as its `recordTampered` error (with the record as it
    /// arrived), and the others as records. `seenVersions`: the sealed version the app last saw of each
    /// record, below which one is refused as a rollback. Other failures (no key, no network) throw.
    package func incomingChecked(_ values: [RecordValue], seenVersions: [Record.ID: UInt64] = [:]) async throws
        -> [(arrived: RecordValue, result: Result<Record, SyncError>)]
    {
        try await ConcurrentMap.map(values) { value in
            do {
                return (
                    value, .success(Record(try await self.opened(value, seenVersion: seenVersions[value.recordID])))
                )
            } catch let error as SyncError where error.code == .recordTampered {
                return (value, .failure(error))
            }
        }
    }

    /// An error that came from the server, with its server record's encrypted values opened
    /// (or, when they cannot be, or it fails its sealed type's checks, without the server record and saying
    /// why). `seenVersion`: the sealed version the app last saw of the record, below which the server's
    /// record is refused as a rollback.
    package func incoming(_ error: SyncError, seenVersion: UInt64? = nil) async -> SyncError {
        guard let record = error.serverRecordValue else { return error }
        var opened = error
        do {
            opened.serverRecordValue = try await self.opened(record, seenVersion: seenVersion)
        } catch {
            opened.serverRecordValue = nil
            opened.message += " (the server's record could not be read here: \(error))"
        }
        return opened
    }

    /// A record opened and checked: for a sealed type, no plain value where a sealed one belongs, every
    /// sealed value opening for its place and of one version, and that version not below `seenVersion`.
    private func opened(_ value: RecordValue, seenVersion: UInt64?) async throws -> RecordValue {
        // A key in a form only this device writes would have it read (a pending one: upload) a file of
        // the server's choosing: never from the wire.
        func hasLocalKey(_ field: FieldValue) -> Bool {
            field.namesAsset && field.assetReferences.contains { $0.key.flatMap(LocalAssetKey.init) != nil }
        }
        // Every record read passes here: the keys are sorted (for the same report each time) only for one refused.
        if value.fields.values.contains(where: hasLocalKey),
            let field = value.fields.keys.sorted().first(where: { hasLocalKey(value.fields[$0]!) })
        {
            throw SyncError.tampered(
                value.recordID, recordType: value.recordType, .doesNotOpen,
                "the asset in its field '\(field)' carries a key in a form no server sends")
        }
        let fields = sealedRecordTypes.fields(of: value.recordType)
        if let field = sealedRecordTypes.plainField(in: value) {
            throw SyncError.tampered(
                value.recordID, recordType: value.recordType, .plainField,
                "its field '\(field)' arrived in plain, where \(value.recordType) records hold only sealed values")
        }
        guard RecordSeal.hasSealedFields(value) else {
            // A record of a type sealed whole with nothing sealed in it (every field dropped) would read as an
            // empty record: a forgery too. (A saved record rebuilt from what was sent holds its values opened.)
            if fields == .all, value.encryptedValues.isEmpty {
                throw SyncError.tampered(
                    value.recordID, recordType: value.recordType, .plainField,
                    "it holds no sealed value, where \(value.recordType) records are always sealed")
            }
            return value
        }
        guard let keyring else { throw Self.noPassphrase(value.recordID) }
        let opened = try await keyring.open(value, declared: fields != nil, client: DatabaseClient(database: self))
        if fields != nil, let seenVersion, let version = opened.sealedVersion, version < seenVersion {
            throw SyncError.tampered(
                value.recordID, recordType: value.recordType, .rollback,
                "it is version \(version) of the record, older than version \(seenVersion) this device has seen "
                    + "(an earlier value served again)")
        }
        return opened
    }

    static func noPassphrase(_ recordID: RecordValue.ID) -> SyncError {
        SyncError(
            .notAuthenticated,
            "\(recordID) has encrypted values and this device has no passphrase for them: give the container the account's passphrase (SYNCKIT_PASSPHRASE, or a Keyring)"
        )
    }
}
