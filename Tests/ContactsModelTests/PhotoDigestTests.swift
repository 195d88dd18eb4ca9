import ContactsModel
import Foundation
import Testing

@Suite("Finding a photo's digest in a stored contact without reading it")
struct PhotoDigestTests {
    let digest = String(repeating: "ab", count: 32)

    @Test("the digest after the property's name, wherever it is; nil when there is none or it is cut short")
    func findsTheDigest() {
        let line = Array("X-SYNCKIT-PHOTO:\(digest);1234;image/jpeg".utf8)
        // A stored contact holds binary lengths and other text around the line, with the name's first letter too.
        let before: [UInt8] = [3, 0, 0, 0, 88, 88, 45, 10] + Array("X-SYNC,X".utf8)
        #expect(ContactPhoto.digest(inStoredForm: Data(before + line + [0, 1])) == digest)
        #expect(ContactPhoto.digest(inStoredForm: Data(line.prefix(16 + 64))) == digest, "ending with the digest")
        #expect(ContactPhoto.digest(inStoredForm: Data(line.prefix(16 + 63))) == nil, "one digit short")
        #expect(ContactPhoto.digest(inStoredForm: Data(before + [0, 0])) == nil)
        #expect(ContactPhoto.digest(inStoredForm: Data()) == nil)
        let noColon = Array("X-SYNCKIT-PHOTO;\(digest)".utf8)
        #expect(ContactPhoto.digest(inStoredForm: Data(noColon + [0])) == nil)
        let notHex = Array("X-SYNCKIT-PHOTO:\(String(repeating: "zz", count: 32))".utf8)
        #expect(ContactPhoto.digest(inStoredForm: Data(notHex)) == nil)
    }
}
