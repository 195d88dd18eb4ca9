import ContactsModel
import Foundation
import GRDB
import SyncCore

/// The times edits are stamped with, which decide a conflict between two devices that changed one field
/// (the newer edit wins): a hybrid logical clock over the server's time.
///
/// A device's own clock may run hours ahead or behind. So the device learns how far its clock is from
/// the server's, from the modification date the server gives each record it saves, and reads the time
/// as the server would. And no edit is stamped earlier than an edit the device has already made or
/// fetched: the stamp is one millisecond after it at least, so an edit made after seeing another is
/// newer than it, whatever the clocks say.
enum EditClock {
    /// How far ahead of the server's time an edit time may be and still be taken as seen: a device whose
    /// clock ran ahead before it learned the server's stamps its first edits in the future, and other
    /// devices must not follow it there.
    static let tolerance: TimeInterval = 60

    /// The time for an edit this device makes now, by its own clock `now`; remembered as the latest.
    static func stamp(now: Date, _ db: GRDB.Database) throws -> Date {
        let latest = try double(.latestEditTime, db).map(Date.init(timeIntervalSinceReferenceDate:))
        var time = try serverTime(now, db).roundedToMilliseconds
        if let latest, time <= latest { time = latest.addingTimeInterval(0.001).roundedToMilliseconds }
        try setLatest(time, db)
        return time
    }

    /// Remembers an edit time this device has seen (a fetched contact's latest edit), up to a little after
    /// the server's time now.
    static func observe(_ time: Date, now: Date, _ db: GRDB.Database) throws {
        guard time != .distantPast else { return }
        let seen = min(time, try serverTime(now, db).addingTimeInterval(tolerance))
        if let latest = try double(.latestEditTime, db), latest >= seen.timeIntervalSinceReferenceDate { return }
        try setLatest(seen, db)
    }

    /// Learns how far this device's clock (`now`) is from the server's, which gave a record it just saved
    /// the modification date `serverDate`. Edit times this device stamped in the future before it knew
    /// are no longer the latest.
    static func learnOffset(serverDate: Date, now: Date, _ db: GRDB.Database) throws {
        try ContactStore.setSetting(.serverClockOffset, String(serverDate.timeIntervalSince(now)), db)
        if let latest = try double(.latestEditTime, db),
            latest > serverDate.addingTimeInterval(tolerance).timeIntervalSinceReferenceDate
        {
            try setLatest(serverDate, db)
        }
    }

    /// Learns from records fetched now (`now` by this device's clock) that the server's time is at least
    /// `serverDate`, their latest modification date: a clock that runs behind is put right by any fetch.
    static func learnLowerBound(serverDate: Date, now: Date, _ db: GRDB.Database) throws {
        if try serverTime(now, db) < serverDate {
            try ContactStore.setSetting(.serverClockOffset, String(serverDate.timeIntervalSince(now)), db)
        }
    }

    /// `now`, by this device's clock, as the server's clock reads it (as far as this device knows).
    private static func serverTime(_ now: Date, _ db: GRDB.Database) throws -> Date {
        now.addingTimeInterval(try double(.serverClockOffset, db) ?? 0)
    }

    private static func setLatest(_ time: Date, _ db: GRDB.Database) throws {
        try ContactStore.setSetting(.latestEditTime, String(time.timeIntervalSinceReferenceDate), db)
    }

    private static func double(_ key: Setting, _ db: GRDB.Database) throws -> Double? {
        try ContactStore.setting(key, db).flatMap(Double.init)
    }
}
