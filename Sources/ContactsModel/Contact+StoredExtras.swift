import Foundation
import VCard

/// The birthday, the anniversary and the groups are stored, and synced, as vCard lines among the
/// unmodelled properties (`BDAY:19850412`, `CATEGORIES:Family,Climbing`). Versions that came before
/// these fields read them as the unmodelled properties they always kept, show them in an export and
/// keep them through their own edits; this version takes them back into their fields when it reads.
/// Birthdays imported before, which were kept that way, appear as birthdays. The photo's description
/// (``ContactPhoto``) travels the same way, as an `X-SYNCKIT-PHOTO` line.
extension Contact {
    /// The unmodelled properties with the birthday, the anniversary and the groups in front.
    package var storedExtras: [String] {
        let properties = datesAndGroups(version: .v4) + (photo.map { [$0.property] } ?? [])
        guard !properties.isEmpty else { return extras }
        return properties.map(VCardSerializer.contentLine) + extras
    }

    /// Takes a birthday, an anniversary and groups out of ``extras`` into their fields; fields without
    /// an edit time of their own (written by an earlier version) take that of the extras.
    package mutating func takeStoredExtras() {
        for field in [Field.birthday, .anniversary, .groups, .photo] where modified[field] == nil {
            modified[field] = modified[.extras]
        }
        guard extras.contains(where: Self.mayHoldField) else { return }
        let lines = extras
        extras = []
        for line in lines {
            if Self.mayHoldField(line), let property = Self.quickProperty(line), take(property) { continue }
            extras.append(line)
        }
    }

    private static func mayHoldField(_ line: String) -> Bool {
        line.hasPrefix("BDAY") || line.hasPrefix("ANNIVERSARY") || line.hasPrefix("X-ANNIVERSARY")
            || line.hasPrefix("CATEGORIES") || line.hasPrefix(ContactPhoto.propertyName)
    }

    /// The property on `line`; lines without parameters, as this version writes them, without the parser.
    private static func quickProperty(_ line: String) -> Property? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let name = line[..<colon]
        if name.contains(";") || name.contains(".") { return property(fromContentLine: line) }
        return Property(name: String(name), value: String(line[line.index(after: colon)...]))
    }
}
