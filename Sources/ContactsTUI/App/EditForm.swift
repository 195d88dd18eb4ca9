import ContactsModel
import ContactsStore
import Foundation

/// The form that adds or edits a contact: one line per field, emails and phones one per line as
/// `label: value`, with always one empty line at the end of each list to add another.
///
/// Tab and Shift-Tab move between fields, Enter validates (``ContactValidation``) and either hands back the
/// contact to save or shows the problem under the fields and moves to the field at fault.
public struct EditForm: Sendable, Equatable {
    /// What a line of the form edits.
    public enum Slot: Sendable, Hashable {
        case name
        /// An email; `itemID` is the ``LabeledValue/id`` of the item it started as, so that an edit keeps it.
        case email(itemID: String?)
        case phone(itemID: String?)
        case organization, birthday, anniversary, groups, street, city, region, postalCode, country, notes

        /// The part of the contact it edits.
        public var part: ContactPart {
            switch self {
            case .name: .name
            case .email: .email
            case .phone: .phone
            case .organization: .organization
            case .birthday: .birthday
            case .anniversary: .anniversary
            case .groups: .groups
            case .street: .street
            case .city: .city
            case .region: .region
            case .postalCode: .postalCode
            case .country: .country
            case .notes: .notes
            }
        }

        /// The label shown before the field.
        public var label: String { part.rawValue }

        var isEmail: Bool { part == .email }
        var isPhone: Bool { part == .phone }
    }

    /// One line of the form.
    public struct Field: Sendable, Equatable {
        /// What it edits.
        public var slot: Slot
        /// Its text and cursor.
        public var input: TextField
        /// Tells lines apart while the lists grow and shrink.
        let serial: Int
    }

    /// The contact as it was when the form opened; nil for a new contact.
    public let original: Contact?
    /// The lines, in order.
    public private(set) var fields: [Field]
    /// The index of the line being edited.
    public private(set) var focus: Int
    /// Why the last save was refused, shown under the fields until the next edit.
    public var error: String?
    private var nextSerial: Int

    /// A form for `contact`, or an empty one for a new contact.
    public init(editing contact: Contact?) {
        original = contact
        func text(_ slot: Slot) -> (Slot, String) { (slot, contact.map(slot.part.text(of:)) ?? "") }
        var slots: [(Slot, String)] = [text(.name)]
        for email in contact?.emails ?? [] { slots.append((.email(itemID: email.id), email.labeledText)) }
        slots.append((.email(itemID: nil), ""))
        for phone in contact?.phones ?? [] { slots.append((.phone(itemID: phone.id), phone.labeledText)) }
        slots.append((.phone(itemID: nil), ""))
        let oneValue: [Slot] = [
            .organization, .birthday, .anniversary, .groups, .street, .city, .region, .postalCode, .country, .notes,
        ]
        slots += oneValue.map(text)
        fields = slots.enumerated().map { Field(slot: $1.0, input: TextField($1.1), serial: $0) }
        nextSerial = fields.count
        focus = 0
    }

    /// "New contact" or "Edit contact".
    public var title: String { original == nil ? "New contact" : "Edit contact" }

    /// The line being edited.
    public var focusedField: Field { fields[focus] }

    // MARK: Editing

    /// Moves to the next line, from the last back to the first.
    public mutating func focusNext() {
        moveFocus(to: (focus + 1) % fields.count)
    }

    /// Moves to the previous line, from the first round to the last.
    public mutating func focusPrevious() {
        moveFocus(to: (focus + fields.count - 1) % fields.count)
    }

    /// Types `character` into the focused line.
    public mutating func type(_ character: Character) {
        fields[focus].input.insert(character)
        edited()
    }

    /// Applies an editing key to the focused line.
    public mutating func apply(_ command: KeyMap.TextCommand) {
        fields[focus].input.apply(command)
        edited()
    }

    private mutating func edited() {
        error = nil
        keepOneEmptyLine(after: fields[focus].slot)
    }

    private mutating func moveFocus(to index: Int) {
        let target = fields[index].serial
        // An emptied email or phone line disappears once left, unless it is the list's spare line.
        let left = fields[focus]
        if left.input.text.trimmingCharacters(in: .whitespaces).isEmpty, left.slot.isEmail || left.slot.isPhone,
            let next = fields.indices.last(where: { sameList(fields[$0].slot, left.slot) }), next != focus
        {
            fields.remove(at: focus)
        }
        focus = fields.firstIndex { $0.serial == target } ?? 0
    }

    /// Typing into a list's spare line adds a new spare line after it.
    private mutating func keepOneEmptyLine(after slot: Slot) {
        guard slot.isEmail || slot.isPhone,
            let last = fields.indices.last(where: { sameList(fields[$0].slot, slot) }),
            !fields[last].input.isEmpty
        else { return }
        let spare: Slot = slot.isEmail ? .email(itemID: nil) : .phone(itemID: nil)
        fields.insert(Field(slot: spare, input: TextField(), serial: nextSerial), at: last + 1)
        nextSerial += 1
    }

    private func sameList(_ a: Slot, _ b: Slot) -> Bool {
        (a.isEmail && b.isEmail) || (a.isPhone && b.isPhone)
    }

    // MARK: Saving

    /// The contact the form describes: the original with the form's values (a new contact when adding);
    /// an error when a date is not one.
    public func contact() throws(ContactError) -> Contact {
        var contact = original ?? Contact(name: "")
        contact.emails = items(where: \.isEmail, originals: original?.emails ?? [])
        contact.phones = items(where: \.isPhone, originals: original?.phones ?? [])
        for field in fields where !field.slot.part.isList {
            let text = field.input.text
            try field.slot.part.set(
                field.slot == .name ? text.trimmingCharacters(in: .whitespaces) : text, on: &contact)
        }
        return contact
    }

    /// Validates the form. Returns the contact to save, or nil after showing the problem and moving to the line
    /// at fault.
    public mutating func submit() -> Contact? {
        do {
            let contact = try contact()
            try ContactValidation.validate(contact)
            error = nil
            return contact
        } catch {
            self.error = error.description
            if let index = fieldIndex(at: error) { focus = index }
            return nil
        }
    }

    /// The line a validation error is about.
    func fieldIndex(at error: ContactError) -> Int? {
        guard let (part, value) = error.subject else { return nil }
        let lines = fields.indices.filter { fields[$0].slot.part == part }
        return lines.first { index in
            !fields[index].input.isEmpty
                && (value == nil || LabeledValue.parse(fields[index].input.text).value == value)
        } ?? lines.first
    }

    private func items(where isList: (Slot) -> Bool, originals: [LabeledValue]) -> [LabeledValue] {
        let byID = Dictionary(originals.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        return fields.filter { isList($0.slot) }.compactMap { field in
            let (label, value) = LabeledValue.parse(field.input.text)
            guard !value.isEmpty || !label.isEmpty else { return nil }
            let itemID: String? =
                switch field.slot {
                case .email(let id), .phone(let id): id
                default: nil
                }
            guard let itemID, var item = byID[itemID] else { return LabeledValue(label: label, value: value) }
            item.label = label
            item.value = value
            return item
        }
    }
}
