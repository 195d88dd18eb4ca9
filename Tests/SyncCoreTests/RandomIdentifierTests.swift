import SyncCore
import Testing

@Suite("Random identifiers")
struct RandomIdentifierTests {
    @Test("32 lowercase hexadecimal digits, an asset ID the server accepts, and never the same twice in a thousand")
    func hexadecimal() {
        let ids = (0..<1000).map { _ in RandomIdentifier.hexadecimal(bytes: 16) }
        for id in ids.prefix(10) {
            #expect(id.utf8.count == 32 && id.allSatisfy { "0123456789abcdef".contains($0) }, "\(id)")
            #expect(AssetReference.problem(withAssetID: id) == nil)
        }
        #expect(Set(ids).count == 1000)
        #expect(RandomIdentifier.hexadecimal(bytes: 3).count == 6)
    }
}
