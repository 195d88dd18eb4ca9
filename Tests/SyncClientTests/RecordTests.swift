import Foundation
import SyncClient
import SyncCore
import Testing

/// `Record` used the way CloudKit code uses `CKRecord`: values written with the subscript, read
/// back with `as?`, encrypted values beside them, and system fields archived as `Data`.
@Suite("Record: CKRecord's API")
struct RecordTests {
    static let zoneID = RecordZone.ID(zoneName: "Contacts")
    static let recordID = Record.ID(recordName: "ada", zoneID: zoneID)

    @Test("every value type reads back with as?, numbers as every number type, as with CloudKit")
    func valuesReadBackWithAs() throws {
        let record = Record(recordType: "Contact", recordID: Self.recordID)
        let date = Date(timeIntervalSinceReferenceDate: 721_692_800.123_456_7)
        let reference = Record.Reference(recordID: Record.ID(recordName: "team", zoneID: Self.zoneID))
        record["name"] = "Ada"
        record["age"] = 36
        record["big"] = Int64.max
        record["height"] = 1.65
        record["member"] = true
        record["born"] = date
        record["photo"] = Data([0, 1, 2, 255])
        record["team"] = reference
        record["emails"] = ["ada@example.com", "ada@work.example"]
        record["scores"] = [1, 2, 3]
        let missing: String? = nil
        record["nickname"] = missing

        #expect(record["name"] as? String == "Ada")
        #expect(record["age"] as? Int == 36)
        #expect(record["age"] as? Int64 == 36)
        #expect(record["age"] as? Double == 36)
        #expect(record["big"] as? Int64 == Int64.max)
        #expect(record["height"] as? Double == 1.65)
        #expect(record["member"] as? Bool == true)
        #expect(record["born"] as? Date == date)
        #expect(record["photo"] as? Data == Data([0, 1, 2, 255]))
        #expect(record["team"] as? Record.Reference == reference)
        #expect(record["emails"] as? [String] == ["ada@example.com", "ada@work.example"])
        #expect(record["scores"] as? [Int] == [1, 2, 3])
        #expect(record["nickname"] == nil)
        #expect(record["name"] as? Int == nil)
        #expect(
            record.allKeys() == ["age", "big", "born", "emails", "height", "member", "name", "photo", "scores", "team"])
        #expect(record.changedKeys().contains("nickname"))
    }

    @Test("encryptedValues have the same subscripts and count among the record's keys")
    func encryptedValuesSubscripts() {
        let record = Record(recordType: "Contact", recordID: Self.recordID)
        record["plain"] = "visible"
        record.encryptedValues["name"] = "Ada"
        record.encryptedValues["born"] = Date(timeIntervalSinceReferenceDate: 1.5)
        #expect(record.encryptedValues["name"] as? String == "Ada")
        #expect(record.encryptedValues["born"] as? Date == Date(timeIntervalSinceReferenceDate: 1.5))
        #expect(record["name"] == nil)
        #expect(record.encryptedValues.allKeys() == ["born", "name"])
        #expect(record.encryptedValues.changedKeys() == ["born", "name"])
        #expect(record.allKeys() == ["born", "name", "plain"])
        record.encryptedValues["name"] = nil
        #expect(record.encryptedValues["name"] == nil)
    }

    @Test("a record filled in place is the same object, as the sample's populate(_:) expects")
    func filledInPlace() {
        let record = Record(recordType: "Contact", recordID: Self.recordID)
        func populate(_ record: Record) { record["name"] = "Ada" }
        populate(record)
        #expect(record["name"] as? String == "Ada")
    }

    @Test("system fields archived with NSKeyedArchiver come back exactly, with no field values, and stay small")
    func systemFieldsArchive() throws {
        let saved = RecordValue(
            recordID: Self.recordID, recordType: "Contact", fields: ["name": .string("Ada")],
            recordChangeTag: "7f3a", creationDate: Date(timeIntervalSinceReferenceDate: 700_000_000.123_456),
            modificationDate: Date(timeIntervalSinceReferenceDate: 700_000_100.654_321),
            creatorUserRecordID: Record.ID(userRecordName: "_ada"),
            lastModifiedUserRecordID: Record.ID(userRecordName: "_bob"))
        let record = Record(saved)
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        record.encodeSystemFields(with: archiver)
        let data = archiver.encodedData
        #expect(data.count < 1_000, "system fields took \(data.count) bytes")

        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        unarchiver.requiresSecureCoding = true
        let restored = try #require(Record(coder: unarchiver))
        #expect(restored.recordID == Self.recordID)
        #expect(restored.recordType == "Contact")
        #expect(restored.recordChangeTag == "7f3a")
        #expect(restored.creationDate == saved.creationDate)
        #expect(restored.modificationDate == saved.modificationDate)
        #expect(restored.creatorUserRecordID == saved.creatorUserRecordID)
        #expect(restored.lastModifiedUserRecordID == saved.lastModifiedUserRecordID)
        #expect(restored.allKeys().isEmpty)
        #expect(restored.changedKeys().isEmpty)
    }

    @Test("a whole record archived with NSKeyedArchiver keeps its fields and encrypted values")
    func wholeRecordArchive() throws {
        let record = Record(recordType: "Contact", recordID: Self.recordID)
        record["name"] = "Ada"
        record.encryptedValues["secret"] = Data([9, 9])
        let data = try NSKeyedArchiver.archivedData(withRootObject: record, requiringSecureCoding: true)
        let restored = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: Record.self, from: data))
        #expect(restored.value == record.value)
        #expect(restored.encryptedValues["secret"] as? Data == Data([9, 9]))
    }

    @Test("an archive that is not a record's gives nil, not a crash")
    func foreignArchive() throws {
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.encode("hello" as NSString, forKey: "greeting")
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: archiver.encodedData)
        unarchiver.requiresSecureCoding = true
        #expect(Record(coder: unarchiver) == nil)
    }
}
