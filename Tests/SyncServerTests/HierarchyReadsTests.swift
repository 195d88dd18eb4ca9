import Foundation
import SyncCore
import Testing

@testable import SyncServer

/// The decisions both storage backends share around a modification's hierarchy reads and writes
/// (`Semantics/HierarchyReads.swift`): what a store asks before planning, and how moves are numbered and
/// ordered. The backends' reads and writes behind them run in `HierarchySharingTests` on SQLite and
/// PostgreSQL.
@Suite struct HierarchyReadsTests {
    static let zone = RecordZone.ID(zoneName: "Contacts")

    static func record(_ name: String, parent: String? = nil) -> RecordValue {
        var record = RecordValue(recordType: "Contact", recordID: .init(recordName: name, zoneID: zone))
        record.parent = parent.map { RecordValue.Reference(recordID: .init(recordName: $0, zoneID: zone)) }
        return record
    }

    static func key(_ name: String) -> RecordKey { RecordKey(zoneName: zone.zoneName, recordName: name) }

    static func node(parent: String?) -> RecordHierarchy.Node {
        RecordHierarchy.Node(recordType: "Contact", parentName: parent, shareName: nil, shareRoot: nil)
    }

    @Test("a chain is read once per parent, and not for a parent an earlier chain holds")
    func chainsReadOnce() {
        let request = ModifyRecordsRequest(saves: [
            Self.record("a", parent: "p"), Self.record("b", parent: "p"), Self.record("c", parent: "q"),
            Self.record("d"),
        ])
        var lookup = RecordHierarchy.Lookup(request: request, base: .init())
        var read: [RecordKey] = []
        while let start = lookup.nextChainStart() {
            read.append(start)
            // p's chain: p below q.
            if start == Self.key("p") {
                lookup.addChain([("p", Self.node(parent: "q")), ("q", Self.node(parent: nil))], from: start)
            }
        }
        #expect(read == [Self.key("p")])
        #expect(lookup.context.nodes[Self.key("q")]?.parentName == nil)
        #expect(lookup.context.nodes[Self.key("p")]?.parentName == "q")
    }

    @Test("only saves that may join a hierarchy are asked about shares below; only a participant's about adoptions")
    func questions() {
        let request = ModifyRecordsRequest(saves: [
            Self.record("child", parent: "p"), Self.record("root"), Self.record("plain"),
        ])
        var base = RecordHierarchy.Context()
        base.shareNames[Self.key("root")] = "share-1"
        var owner = RecordHierarchy.Lookup(request: request, base: base)
        #expect(owner.shareBelowQuestions == [Self.key("child"), Self.key("root")])
        #expect(owner.adoptionQuestions.isEmpty)
        owner.addShareBelow(Self.key("root"))
        #expect(owner.context.subtreesWithShares == [Self.key("root")])

        base.access[Self.zone.zoneName] = .init(readableRoots: ["r"], writableRoots: ["r"])
        var participant = RecordHierarchy.Lookup(request: request, base: base)
        #expect(participant.adoptionQuestions == [Self.key("child"), Self.key("root"), Self.key("plain")])
        participant.addAdoption(Self.key("plain"))
        #expect(participant.context.adoptions == [Self.key("plain")])
    }

    @Test("moves are numbered on from the plan's last change, in byte order of names, the record's own first")
    func movesNumberedInOrder() {
        var log = RecordHierarchy.MoveLog(after: 41)
        let leaving = RecordHierarchy.RootChange(key: Self.key("m"), old: "r1", new: "r2", includesRecord: true)
        let (moved, entries) = log.add(
            leaving, ownType: "Folder",
            descendants: [
                .init(name: "b", type: "Contact", root: "r1"), .init(name: "B", type: "Contact", root: "r1"),
                .init(name: "already", type: "Contact", root: "r2"), .init(name: "a", type: "Contact", root: nil),
            ])
        #expect(moved == ["B", "a", "b"])
        #expect(entries.map(\.recordName) == ["m", "B", "a", "b"])
        #expect(entries.map(\.seq) == [42, 43, 44, 45])
        #expect(entries.map(\.oldRoot) == ["r1", "r1", nil, "r1"])
        #expect(entries.allSatisfy { $0.newRoot == "r2" })
        #expect(log.seq == 45 && log.zones == [Self.zone.zoneName])
    }

    @Test("a deletion's own move is not logged (its tombstone tells), and a change that moves nothing logs nothing")
    func deletionAndNothingMoved() {
        var log = RecordHierarchy.MoveLog(after: 7)
        let deleted = RecordHierarchy.RootChange(key: Self.key("gone"), old: "r1", new: nil, includesRecord: false)
        #expect(!deleted.logsOwnMove)
        let (moved, entries) = log.add(deleted, ownType: nil, descendants: [])
        #expect(moved.isEmpty && entries.isEmpty)
        #expect(log.seq == 7 && log.zones.isEmpty)

        var plan = RecordModificationPlanner.Plan(
            rows: [], zoneSeqs: ["Contacts": 7, "Other": 5], endSeq: 7, saved: [], failedSaves: [], deleted: [],
            failedDeletes: [])
        plan.rootChanges = [deleted]
        #expect(plan.zoneSeqs(after: log) == ["Contacts": 7, "Other": 5])
        _ = log.add(
            .init(key: Self.key("joins"), old: nil, new: "r3", includesRecord: true), ownType: nil,
            descendants: [.init(name: "kid", type: "Contact", root: nil)])
        #expect(plan.zoneSeqs(after: log) == ["Contacts": 8, "Other": 5])
    }
}
