import ContactsModel
import Foundation
import GRDB
import SyncCore

/// The contacts' table keeps each contact's book as a number (`contact.book`: no byte for the default book,
/// one for most others, where the zone's and owner's names took 26), and `bookNumber` says which zone each
/// number is. A number stays its zone's: numbers are taken back only by a wipe, which removes every contact
/// with them, so a row never comes to name another book.
extension ContactStore {
    /// The default book's number, the contacts' table's default (SQLite keeps the values 0 and 1 in no byte).
    static let defaultBookNumber: Int64 = 1

    /// The table of numbers, with the default book's.
    static let bookNumberTable = """
        CREATE TABLE bookNumber (
            n INTEGER PRIMARY KEY, zoneName TEXT NOT NULL, ownerName TEXT NOT NULL, UNIQUE (zoneName, ownerName));
        INSERT INTO bookNumber (n, zoneName, ownerName)
            VALUES (\(defaultBookNumber), '\(Contact.zoneID.zoneName)', '\(Contact.zoneID.ownerName)');
        """

    /// SQL for the number of the book its two arguments name (zone, then owner): NULL, which no contact's
    /// book equals, for a book no contact was ever in.
    static let bookNumberOf = "(SELECT n FROM bookNumber WHERE zoneName = ? AND ownerName = ?)"

    /// The number of `zoneID`, given one now if it has none.
    static func bookNumber(_ zoneID: RecordZone.ID, _ db: GRDB.Database) throws -> Int64 {
        if zoneID == Contact.zoneID { return defaultBookNumber }
        let arguments: StatementArguments = [zoneID.zoneName, zoneID.ownerName]
        if let number = try Int64.fetchOne(db.cachedStatement(sql: "SELECT \(bookNumberOf)"), arguments: arguments) {
            return number
        }
        try db.cachedStatement(sql: "INSERT INTO bookNumber (zoneName, ownerName) VALUES (?, ?)")
            .execute(arguments: arguments)
        return db.lastInsertedRowID
    }

    /// The zone of every book number.
    static func bookZones(_ db: GRDB.Database) throws -> [Int64: RecordZone.ID] {
        var zones: [Int64: RecordZone.ID] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT n, zoneName, ownerName FROM bookNumber") {
            zones[row["n"]] = RecordZone.ID(zoneName: row["zoneName"], ownerName: row["ownerName"])
        }
        return zones
    }
}
