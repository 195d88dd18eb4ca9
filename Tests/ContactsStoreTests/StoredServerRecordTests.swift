import ContactsModel
import Foundation
import SyncCore
import Testing

@testable import ContactsStore

/// A device keeps each contact's last known server record: compact since 0.3, JSON before (still read).
@Suite("Last known server records as the device file keeps them")
struct StoredServerRecordTests {
    static let name = "5B1B4D1C-4C9C-4E53-9F5E-8B0B2F9E1D11"

    /// A contact's record as a device keeps it after a sync: a change tag, the server's dates, its owner as
    /// creator and modifier, the saving device among the encrypted values (the contact itself is kept apart).
    static var contactRecord: RecordValue {
        var record = RecordValue(
            recordID: RecordValue.ID(recordName: name, zoneID: RecordZone.ID(zoneName: "Contacts")),
            recordType: "Contact", fields: [:], recordChangeTag: "3f9a1c",
            creationDate: Date(timeIntervalSince1970: 1_764_300_000.123),
            modificationDate: Date(timeIntervalSince1970: 1_764_300_100.456),
            creatorUserRecordID: RecordValue.ID(userRecordName: "_8d3c0f5e6a7b4c2d9e1f0a2b3c4d5e6f"),
            lastModifiedUserRecordID: RecordValue.ID(userRecordName: "_8d3c0f5e6a7b4c2d9e1f0a2b3c4d5e6f"))
        record.replaceWithoutChange(encrypted: "device", by: .string("laptop"))
        return record
    }

    /// A record of a book someone else shares: their zone, a different last modifier, plain values of
    /// every kind, no dates and no change tag; kept in a row named otherwise than the record.
    static var sharedRecord: RecordValue {
        var record = RecordValue(
            recordID: RecordValue.ID(
                recordName: "book-name", zoneID: RecordZone.ID(zoneName: "Family", ownerName: "_grace")),
            recordType: "Book", fields: [:], recordChangeTag: nil, creationDate: nil, modificationDate: nil,
            creatorUserRecordID: RecordValue.ID(userRecordName: "_grace"),
            lastModifiedUserRecordID: RecordValue.ID(userRecordName: "_ada"))
        let fields: [String: FieldValue] = [
            "title": .string("Zoë \"Q\" 张伟 🙂\n"), "count": .int64(-3), "ratio": .double(0.5),
            "when": .date(Date(timeIntervalSince1970: 1_000)), "blob": .bytes(Data([0, 1, 2, 255])),
            "list": .list([.string("a"), .int64(1)]),
        ]
        for (key, value) in fields { record.replaceWithoutChange(field: key, by: value) }
        record.replaceWithoutChange(encrypted: "secret", by: .bytes(Data(repeating: 7, count: 40)))
        return record
    }

    @Test("a record is kept compact and read back equal, system fields and values alike")
    func compactRoundTrip() throws {
        for (record, row) in [(Self.contactRecord, Self.name), (Self.sharedRecord, "a-row-of-its-own")] {
            let stored = StoredServerRecord.encode(record, name: row)
            #expect(stored.first == StoredServerRecord.compact)
            let read = try #require(StoredServerRecord.decode(stored, name: row))
            #expect(read == record)
            #expect(read.recordID == record.recordID)
            #expect(read.creatorUserRecordID == record.creatorUserRecordID)
            #expect(read.lastModifiedUserRecordID == record.lastModifiedUserRecordID)
            #expect(read.encryptedValues == record.encryptedValues)
            #expect(read.changedKeys.isEmpty)
        }
    }

    @Test("a contact's record takes under a sixth of what JSON took")
    func compactIsSmall() throws {
        let compact = StoredServerRecord.encode(Self.contactRecord, name: Self.name)
        var withParent = Self.contactRecord
        withParent.parent = RecordValue.Reference(recordID: RecordValue.ID(recordName: "x", zoneID: Contact.zoneID))
        let json = StoredServerRecord.encode(withParent, name: Self.name)
        #expect(json.first == UInt8(ascii: "{"))
        #expect(compact.count < 64, "compact: \(compact.count) bytes")
        #expect(compact.count * 6 < json.count, "compact \(compact.count) bytes, JSON \(json.count)")
    }

    /// `record` as form 1 (UInt32 counts, the values always as JSON) or form 2 (varint counts, values that
    /// are all strings as strings) wrote it, every string written out, for the parts these records use.
    static func earlierForm(_ form: UInt8, _ record: RecordValue, otherName: Bool, otherOwner: Bool) -> Data {
        let first = form == StoredServerRecord.compactFirst
        var writer = StoredBytesWriter(capacity: 256)
        func text(_ value: String) { first ? writer.string(value) : writer.varintString(value) }
        writer.byte(form)
        var flags: UInt8 = (otherName ? 1 : 0) | (otherOwner ? 2 : 0)
        if record.recordChangeTag != nil { flags |= 4 }
        if record.creationDate != nil { flags |= 8 }
        if record.modificationDate != nil { flags |= 16 }
        if record.creatorUserRecordID != nil { flags |= 32 }
        let sameModifier = record.lastModifiedUserRecordID == record.creatorUserRecordID
        if record.lastModifiedUserRecordID != nil { flags |= sameModifier ? 128 : 64 }
        writer.byte(flags)
        if otherName { text(record.recordID.recordName) }
        text(record.recordID.zoneID.zoneName)
        if otherOwner { text(record.recordID.zoneID.ownerName) }
        text(record.recordType)
        if let tag = record.recordChangeTag { text(tag) }
        if let date = record.creationDate { writer.int64(date.millisecondsSince1970) }
        if let date = record.modificationDate { writer.int64(date.millisecondsSince1970) }
        if let creator = record.creatorUserRecordID { text(creator.recordName) }
        if !sameModifier, let modifier = record.lastModifiedUserRecordID { text(modifier.recordName) }
        for fields in [record.fields, record.encryptedValues] {
            var json = JSONWriter(capacity: 128)
            if !fields.isEmpty { json.fields(fields) }
            if first {
                writer.byteString(json.bytes)
            } else if fields.isEmpty {
                writer.byte(0)
            } else if fields.values.allSatisfy({ $0.stringValue != nil }) {
                writer.byte(1)
                writer.varint(fields.count)
                for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
                    writer.varintString(key)
                    writer.varintString(value.stringValue ?? "")
                }
            } else {
                writer.byte(2)
                writer.varintString(json.bytes)
            }
        }
        return writer.data
    }

    @Test("rows of the first and second compact forms read as they were")
    func earlierFormsRead() throws {
        for form in [StoredServerRecord.compactFirst, StoredServerRecord.compactSecond] {
            for (record, row, otherName, otherOwner) in [
                (Self.contactRecord, Self.name, false, false), (Self.sharedRecord, "a-row-of-its-own", true, true),
            ] {
                let stored = Self.earlierForm(form, record, otherName: otherName, otherOwner: otherOwner)
                let read = try #require(StoredServerRecord.decode(stored, name: row))
                #expect(read == record)
                #expect(read.encryptedValues == record.encryptedValues)
                #expect(read.creatorUserRecordID == record.creatorUserRecordID)
                #expect(read.lastModifiedUserRecordID == record.lastModifiedUserRecordID)
                // Form 3 adds a byte of shorthands, which a contact's record more than pays for.
                let now = StoredServerRecord.encode(read, name: row).count
                #expect(row == Self.name ? now < stored.count : now <= stored.count + 1, "\(now), \(stored.count)")
            }
        }
        // A contact's record: the zone, the type and the creator written short, 34 bytes less.
        let second = Self.earlierForm(
            StoredServerRecord.compactSecond, Self.contactRecord, otherName: false, otherOwner: false)
        let third = StoredServerRecord.encode(Self.contactRecord, name: Self.name)
        #expect(third.count + 34 <= second.count, "form 3: \(third.count) bytes, form 2: \(second.count)")
    }

    @Test("a record saved once keeps one date; user record names the server did not make are kept as they are")
    func shorthands() throws {
        var once = Self.contactRecord
        once.modificationDate = once.creationDate
        let stored = StoredServerRecord.encode(once, name: Self.name)
        #expect(stored.count + 8 == StoredServerRecord.encode(Self.contactRecord, name: Self.name).count)
        #expect(StoredServerRecord.decode(stored, name: Self.name)?.modificationDate == once.creationDate)

        // Names like the server's but not quite: upper case, a letter past f, one digit short or long, and
        // a server-made creator with a modifier that is not.
        let names = [
            "_8D3C0F5E6A7B4C2D9E1F0A2B3C4D5E6F", "_8d3c0f5e6a7b4c2d9e1f0a2b3c4d5e6g",
            "_8d3c0f5e6a7b4c2d9e1f0a2b3c4d5e6",
            "_8d3c0f5e6a7b4c2d9e1f0a2b3c4d5e6f0", "-8d3c0f5e6a7b4c2d9e1f0a2b3c4d5e6f", "__defaultOwner__",
        ]
        for name in names {
            var record = Self.contactRecord
            record.creatorUserRecordID = RecordValue.ID(userRecordName: name)
            record.lastModifiedUserRecordID = Self.contactRecord.creatorUserRecordID
            let read = try #require(
                StoredServerRecord.decode(StoredServerRecord.encode(record, name: Self.name), name: Self.name))
            #expect(read.creatorUserRecordID?.recordName == name)
            #expect(read.lastModifiedUserRecordID == Self.contactRecord.creatorUserRecordID)
            record.lastModifiedUserRecordID = RecordValue.ID(userRecordName: name.uppercased() + "x")
            let again = try #require(
                StoredServerRecord.decode(StoredServerRecord.encode(record, name: Self.name), name: Self.name))
            #expect(again.lastModifiedUserRecordID == record.lastModifiedUserRecordID)
        }
        for name in ["_00000000000000000000000000000000", "_ffffffffffffffffffffffffffffffff"] {
            #expect(UUID(userRecordName: name)?.userRecordName == name)
        }
    }

    @Test("a record with a parent, a share or keys marked changed is kept as JSON, whole")
    func jsonForTheRest() throws {
        var withParent = Self.contactRecord
        withParent.parent = RecordValue.Reference(
            recordID: RecordValue.ID(recordName: "root", zoneID: Contact.zoneID), action: .deleteSelf)
        var withShare = Self.sharedRecord
        withShare.share = RecordValue.Reference(
            recordID: RecordValue.ID(recordName: "share", zoneID: withShare.recordID.zoneID))
        var changed = Self.contactRecord
        changed[encrypted: "device"] = .string("phone")
        for record in [withParent, withShare, changed] {
            let stored = StoredServerRecord.encode(record, name: Self.name)
            #expect(stored.first == UInt8(ascii: "{"))
            let read = try #require(StoredServerRecord.decode(stored, name: Self.name))
            #expect(read == record)
            #expect(read.parent == record.parent)
            #expect(read.share == record.share)
            #expect(read.changedKeys == record.changedKeys)
        }
    }

    @Test("every cut-short or lengthened compact row reads as no record, never as a wrong one")
    func damagedRows() throws {
        let stored = StoredServerRecord.encode(Self.sharedRecord, name: Self.name)
        for length in 0..<stored.count {
            #expect(StoredServerRecord.decode(stored.prefix(length), name: Self.name) == nil, "\(length) bytes")
        }
        #expect(StoredServerRecord.decode(stored + [0], name: Self.name) == nil)
        var huge = stored
        // The length of the record's name (a varint), the first part after the form byte and the flags.
        huge.replaceSubrange(3..<7, with: [0xFF, 0xFF, 0xFF, 0x7F])
        #expect(StoredServerRecord.decode(huge, name: Self.name) == nil)
        // Shorthands for parts the flags say are not there, or unknown ones, are damage too.
        let contact = StoredServerRecord.encode(Self.contactRecord, name: Self.name)
        for bit in 5..<8 {
            var unknown = contact
            unknown[2] |= 1 << bit
            #expect(StoredServerRecord.decode(unknown, name: Self.name) == nil, "shorthand bit \(bit)")
        }
        var noDates = Self.contactRecord
        noDates.creationDate = nil
        noDates.modificationDate = nil
        var sameDates = StoredServerRecord.encode(noDates, name: Self.name)
        sameDates[2] |= 1 << 2
        #expect(StoredServerRecord.decode(sameDates, name: Self.name) == nil)
    }
}
