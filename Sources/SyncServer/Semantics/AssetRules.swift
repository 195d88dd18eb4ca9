import Foundation
import SyncCore

/// CloudKit's rules for the assets a record names, decided once for every store.
///
/// A record may name an asset that is completely uploaded, of the size it says, and either uploaded by
/// the account saving the record and named by no record yet, or already this record's. Anything else
/// is refused with one message whatever the reason, so that a record cannot be used to ask whether an
/// asset ID exists.
enum AssetRules {
    /// The IDs of the assets the request's saves name, whose rows the store reads for the planner.
    static func namedAssetIDs(_ request: ModifyRecordsRequest) -> [String] {
        var ids = Set<String>()
        for record in request.saves {
            for value in record.fields.values where value.namesAsset {
                ids.formUnion(value.assetReferences.map(\.assetID))
            }
        }
        return ids.sorted()
    }

    /// The assets a saved record (with its final `fields`) names, for the store to attach; nil when the
    /// save leaves no asset to attach or detach (it names none, and the record it replaces named none).
    /// - Parameters:
    ///   - encoded: `fields` as ``FieldCoding`` encodes them.
    ///   - live: the live record it replaces; an asset it named may stay unread (a merge kept it).
    ///   - assets: the rows of the assets the request names.
    /// - Throws: why the record cannot name one of its assets.
    static func attachment(
        _ recordID: RecordValue.ID, fields: [String: FieldValue], encoded: Data, live: StoredRecord?, owner: String,
        modifier: String, assets: [String: StoredAsset]
    ) throws(SyncError) -> [String]? {
        let hadAssets = live.map { FieldCoding.contains($0.fields, assetMarker) } ?? false
        // Most records name no asset: their encoded fields, which hold the marker for every asset value
        // (alone or in a list), say so in one scan of bytes, without copying each value out of the
        // dictionary (a fifth of planning an upload did).
        guard FieldCoding.contains(encoded, assetMarker), fields.values.contains(where: \.namesAsset) else {
            return hadAssets ? [] : nil
        }
        let place = AssetPlace(owner: owner, key: RecordKey(recordID))
        var named = Set<String>()
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) where value.namesAsset {
            for reference in value.assetReferences {
                named.insert(reference.assetID)
                guard let asset = assets[reference.assetID] else {
                    if let live, FieldCoding.contains(live.fields, Array(reference.assetID.utf8)) { continue }
                    throw notUploaded(recordID, key: key, reference)
                }
                let usable = asset.record == place || (asset.record == nil && asset.uploader == modifier)
                guard usable else { throw notUploaded(recordID, key: key, reference) }
                guard asset.isComplete else {
                    throw SyncError(
                        .invalidArguments,
                        "record '\(recordID.recordName)' names asset '\(asset.id)' in field '\(key)', whose upload holds \(asset.received) of its \(asset.size) bytes; finish the upload, then save the record"
                    )
                }
                guard asset.size == reference.size else {
                    throw SyncError(
                        .invalidArguments,
                        "record '\(recordID.recordName)' says asset '\(asset.id)' in field '\(key)' has \(reference.size) bytes; the upload has \(asset.size)"
                    )
                }
            }
        }
        return named.sorted()
    }

    private static func notUploaded(_ recordID: RecordValue.ID, key: String, _ reference: AssetReference) -> SyncError {
        SyncError(
            .invalidArguments,
            "record '\(recordID.recordName)' names asset '\(reference.assetID)' in field '\(key)', which this account has not uploaded, or whose upload expired; upload the asset, then save the record naming the upload's ID"
        )
    }

    /// The error of a save naming an asset an earlier save of the same request names.
    static func namedTwice(_ recordID: RecordValue.ID, assetID: String) -> SyncError {
        SyncError(
            .invalidArguments,
            "record '\(recordID.recordName)' names asset '\(assetID)', which another record of this request names; an asset belongs to one record: upload it again for this one"
        )
    }

    /// How an asset value begins in stored fields (``FieldCoding``): a string holding this text has its
    /// quotes escaped, so only an asset value matches.
    private static let assetMarker = Array(#""type":"asset""#.utf8)
}
