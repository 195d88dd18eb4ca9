import SyncCore

/// Ada, who owns the zones she shares; Grace and Bob, whom she shares them with; Eve, a stranger: four
/// signed-up accounts of one server, each with a device of its own, for sharing tests.
public struct SharingPeople: Sendable {
    public var ada: TestClient
    public var grace: TestClient
    public var bob: TestClient
    public var eve: TestClient
    public var adaID: String
    public var graceID: String
    public var bobID: String

    /// Signs the four up through `anonymous`, a client of the server without a session.
    public init(_ anonymous: TestClient) async throws {
        ada = try await anonymous.signedUp(username: "ada")
        grace = try await anonymous.signedUp(username: "grace")
        bob = try await anonymous.signedUp(username: "bob")
        eve = try await anonymous.signedUp(username: "eve")
        ada.deviceID = "ada-laptop"
        grace.deviceID = "grace-phone"
        bob.deviceID = "bob-phone"
        adaID = try await ada.account().userRecordName
        graceID = try await grace.account().userRecordName
        bobID = try await bob.account().userRecordName
    }

    /// Ada's Family zone as her participants name it.
    public var family: RecordZone.ID { RecordZone.ID(zoneName: "Family", ownerName: adaID) }
}
