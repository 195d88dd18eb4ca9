import GRDB
import SyncClient

// GRDB and SyncClient both name a `Database` and a `Record`: here the database is the app's SQLite
// database, and a record is CloudKit's.
typealias Database = GRDB.Database
typealias Record = SyncClient.Record
