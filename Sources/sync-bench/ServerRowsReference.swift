import Foundation
import SyncCore

/// SQLite alone, for the server's side of a `sync-bench contacts` run's upload and first download: the rows the
/// server stores for the records the upload saved, inserted with the server's own statement into a file with its
/// schema and settings, one transaction a request as the server writes each (``SQLiteReference/ServerFile``),
/// then read back a page at a time in change order as the download's fetches read them. What the server does
/// beside (reading JSON, checking, planning, answering) is not counted.
struct ServerRowsReference {
    /// The upload's record saves, one request's body at a time.
    let upload: [RecordedTraffic.Exchange]

    /// A zone's changes come in pages of the server's default size.
    static let page = 400

    /// The seconds inserting every request's rows took, and reading them back by page; each request's rows are
    /// made before its clock starts, so that a million contacts' rows are never held at once.
    func measure() throws -> (insert: Double, read: Double) {
        let file = try SQLiteReference.ServerFile()
        defer { file.remove() }
        let owner = "_" + UUID().uuidString.lowercased()
        let modify = Endpoint.modifyRecords.path(.private)
        var insert = Duration.zero
        var inserted = 0
        var zones = Set<String>()
        for exchange in upload where exchange.path == modify {
            let request = try JSONReader.decode(ModifyRecordsRequest.self, from: Data(contentsOf: exchange.request))
            let rows = BareStorageReference.rows(request.saves, owner: owner, firstSeq: Int64(inserted + 1))
            insert += try file.insert([rows], owner: owner)
            inserted += rows.count
            zones.formUnion(request.saves.map(\.recordID.zoneID.zoneName))
        }
        let start = ContinuousClock.now
        var read = 0
        for zone in zones.sorted() {
            read += try file.readPages(owner: owner, zoneName: zone, page: Self.page).rows
        }
        let readTime = ContinuousClock.now - start
        guard inserted > 0, read == inserted else {
            throw BenchError(description: "the server's rows: \(inserted) inserted, \(read) read back")
        }
        return (insert.inSeconds, readTime.inSeconds)
    }
}
