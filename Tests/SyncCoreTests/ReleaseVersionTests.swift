import SyncCore
import Testing

@Suite("Release versions")
struct ReleaseVersionTests {
    @Test("reads MAJOR.MINOR.PATCH, ignores pre-release and build suffixes, fills missing parts with 0")
    func reads() {
        #expect(ReleaseVersion("0.3.0") == ReleaseVersion(0, 3, 0))
        #expect(ReleaseVersion("12.0.7-beta.1") == ReleaseVersion(12, 0, 7))
        #expect(ReleaseVersion("1.2.3+abc") == ReleaseVersion(1, 2, 3))
        #expect(ReleaseVersion("2") == ReleaseVersion(2, 0, 0))
        #expect(ReleaseVersion("2.1") == ReleaseVersion(2, 1, 0))
        for text in ["", "v1.2.3", "1..2", "1.2.3.4", "1.x", "-1.0.0", "1.2.", "１.2.3", "9999999999.0.0", " 1.2.3"] {
            #expect(ReleaseVersion(text) == nil, "\(text.debugDescription) is not a version")
        }
    }

    @Test("compares part by part, numerically")
    func compares() {
        #expect(ReleaseVersion(0, 2, 9) < ReleaseVersion(0, 3, 0))
        #expect(ReleaseVersion(0, 10, 0) > ReleaseVersion(0, 9, 99))
        #expect(ReleaseVersion(1, 0, 0) > ReleaseVersion(0, 99, 99))
        #expect(ReleaseVersion("0.3.0-rc.1")! == ReleaseVersion(0, 3, 0))
        #expect("\(ReleaseVersion(0, 10, 2))" == "0.10.2")
    }
}
