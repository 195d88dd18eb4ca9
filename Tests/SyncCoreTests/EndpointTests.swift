import Testing

@testable import SyncCore

@Suite("Endpoints: the one list of the server's routes, and their paths")
struct EndpointTests {
    @Test("a path fills each parameter in, percent-encoded as one segment: a slash or dots cannot leave it")
    func pathsEncodeParameters() {
        #expect(Endpoint.modifyRecords.path(.shared) == "/v1/databases/shared/records/modify")
        #expect(Endpoint.endSession.path(["id": "0a1b"]) == "/v1/account/sessions/0a1b")
        #expect(Endpoint.uploadStatus.path(["id": "../../account"]) == "/v1/assets/uploads/..%2F..%2Faccount")
        #expect(
            Endpoint.downloadAsset.path(["scope": "private", "assetID": "a b?c#é"])
                == "/v1/databases/private/assets/a%20b%3Fc%23%C3%A9")
        #expect(Endpoint.health.path() == "/v1/health")
    }

    @Test("an asset's download path names its record in the query, encoded the same way")
    func assetDownloadPath() {
        let record = RecordValue.ID(recordName: "r&1", zoneID: RecordZone.ID(zoneName: "Contacts", ownerName: "_bob"))
        #expect(
            AssetDownload.path(assetID: "x/y", recordID: record, scope: .shared)
                == "/v1/databases/shared/assets/x%2Fy?zoneName=Contacts&recordName=r%261&ownerName=_bob")
    }

    @Test("every database endpoint starts with the prefix the fault injector matches")
    func databasePrefix() {
        let database = Endpoint.all.filter { $0.pattern.contains(":scope") }
        #expect(database.count == 7)
        #expect(
            database.allSatisfy { $0.path(["scope": "private", "assetID": "a"]).hasPrefix(Endpoint.databasePaths) })
    }
}
