import Foundation

extension Contact {
    /// One contact from this one and `others`, taken to be the same person, keeping every distinct value:
    /// emails, phones (told apart by their digits), groups and unmodelled properties are put together;
    /// an empty field takes another's value; a different value that has no room (a second organisation,
    /// birthday or address, another name) is kept in the notes as "Also …", as are different notes.
    public func combined(with others: [Contact]) -> Contact {
        var result = self
        var also: [String] = []
        for other in others {
            if DuplicateFinder.nameKey(other.name) != DuplicateFinder.nameKey(result.name) {
                if result.name.isEmpty { result.name = other.name } else { also.append("Also named: \(other.name)") }
            }
            let emails = Set(result.emails.map { $0.value.lowercased() })
            result.emails += other.emails.filter { !emails.contains($0.value.lowercased()) }
            let phones = Set(result.phones.map { Self.phoneKey($0.value) })
            result.phones += other.phones.filter { !phones.contains(Self.phoneKey($0.value)) }
            result.groups = Self.groupList(result.groups + other.groups)
            result.extras += other.extras.filter { !result.extras.contains($0) }
            func keep<Value: Equatable>(
                _ keyPath: WritableKeyPath<Contact, Value>, empty: Value, _ label: String,
                _ text: (Value) -> String
            ) {
                let value = other[keyPath: keyPath]
                guard value != empty, value != result[keyPath: keyPath] else { return }
                if result[keyPath: keyPath] == empty {
                    result[keyPath: keyPath] = value
                } else {
                    also.append("Also \(label): \(text(value))")
                }
            }
            keep(\.organization, empty: "", "organisation") { $0 }
            keep(\.address, empty: PostalAddress(), "address") { $0.singleLine }
            keep(\.birthday, empty: nil, "birthday") { $0?.description ?? "" }
            keep(\.anniversary, empty: nil, "anniversary") { $0?.description ?? "" }
            if !other.notes.isEmpty && !result.notes.contains(other.notes) {
                result.notes = result.notes.isEmpty ? other.notes : result.notes + "\n\n" + other.notes
            }
        }
        let newLines = also.filter { !result.notes.contains($0) }
        if !newLines.isEmpty {
            result.notes = ([result.notes].filter { !$0.isEmpty } + newLines).joined(separator: "\n")
        }
        return result
    }

    /// A phone number as its last nine digits: "+44 20 7946 0000" and "020 7946 0000" are one number.
    static func phoneKey(_ number: String) -> String {
        String(phoneDigits(number).suffix(9))
    }

    /// A phone number's digits, as a search matches them: "+1 (555) 010-0199" is "15550100199".
    static func phoneDigits(_ number: String) -> String {
        String(number.unicodeScalars.filter { ("0"..."9").contains($0) })
    }
}
