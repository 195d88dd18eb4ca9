// One import replaces `import CloudKit`: `import SyncKit` brings the engine, the client library
// (Container, Database, Record) and the wire types (RecordZone, SyncError, …).
@_exported import Foundation
@_exported import SyncClient
@_exported import SyncCore
