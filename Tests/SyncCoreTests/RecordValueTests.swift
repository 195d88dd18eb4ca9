import Foundation
import SyncCore
import Testing

/// A record keeps its values behind one shared reference and copies them on the first change: it must
/// still behave as a value, every copy on its own.
@Suite("A record is a value")
struct RecordValueTests {
    private let id = RecordValue.ID(recordName: "ada", zoneID: RecordZone.ID(zoneName: "Contacts"))

    @Test("a change to a copy, of any member, leaves the original as it was")
    func copiesAreIndependent() {
        var original = RecordValue(recordType: "Contact", recordID: id)
        original["name"] = .string("Ada")
        original[encrypted: "notes"] = .string("first")
        original.recordChangeTag = "tag-1"
        original.sealedVersion = 3
        original.clearChangedKeys()
        let before = original

        var copy = original
        copy["name"] = .string("Ada Lovelace")
        copy[encrypted: "notes"] = nil
        copy.replaceWithoutChange(field: "born", by: .int64(1815))
        copy.recordChangeTag = "tag-2"
        copy.creationDate = Date(timeIntervalSince1970: 1)
        copy.modificationDate = Date(timeIntervalSince1970: 2)
        copy.creatorUserRecordID = RecordValue.ID(userRecordName: "_creator")
        copy.lastModifiedUserRecordID = RecordValue.ID(userRecordName: "_modifier")
        copy.parent = RecordValue.Reference(recordID: RecordValue.ID(recordName: "parent", zoneID: id.zoneID))
        copy.share = RecordValue.Reference(recordID: RecordValue.ID(recordName: "share", zoneID: id.zoneID))
        copy.sealedVersion = 4

        #expect(original == before)
        #expect(original["name"] == .string("Ada"))
        #expect(original[encrypted: "notes"] == .string("first"))
        #expect(original["born"] == nil)
        #expect(original.changedKeys.isEmpty)
        #expect(original.recordChangeTag == "tag-1")
        #expect(original.creationDate == nil && original.modificationDate == nil)
        #expect(original.creatorUserRecordID == nil && original.lastModifiedUserRecordID == nil)
        #expect(original.parent == nil && original.share == nil)
        #expect(original.sealedVersion == 3)

        #expect(copy != original)
        #expect(copy.changedKeys == ["name", "notes"])
        #expect(copy["born"] == .int64(1815))
        #expect(copy.sealedVersion == 4)
        // The copy's ancestor is the original's values, and building it changes neither.
        let ancestor = copy.ancestor
        #expect(ancestor?["name"] == .string("Ada"))
        #expect(ancestor?[encrypted: "notes"] == .string("first"))
        #expect(copy["name"] == .string("Ada Lovelace"))
        #expect(copy.changedKeys == ["name", "notes"])
    }

    @Test("a change to the original after a copy leaves the copy as it was; so does clearing changed keys")
    func originalChangesAlone() {
        var original = RecordValue(recordType: "Contact", recordID: id)
        original["name"] = .string("Ada")
        let copy = original
        original["name"] = .string("Grace")
        original.clearChangedKeys()
        #expect(copy["name"] == .string("Ada"))
        #expect(copy.changedKeys == ["name"])
        #expect(original.changedKeys.isEmpty)
        #expect(original.recordID == copy.recordID && original.recordType == copy.recordType)
    }

    @Test("equal records built apart are equal and hash alike; changed keys and sealed versions do not count")
    func equality() {
        func build() -> RecordValue {
            var record = RecordValue(recordType: "Contact", recordID: id)
            record["name"] = .string("Ada")
            record.recordChangeTag = "tag"
            return record
        }
        var (a, b) = (build(), build())
        b.sealedVersion = 9
        a.clearChangedKeys()
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        b["name"] = .string("Grace")
        #expect(a != b)
    }
}
