import ContactsModel
import Foundation
import SyncCore

extension Contact {
    /// The JSON a contact's lists and address took inside their (encrypted) string fields in records
    /// written one field per value, by versions before the whole-contact field: objects with sorted keys,
    /// dates as milliseconds since 1970. Read by hand: Foundation's JSONDecoder took a third of a
    /// download. A value that does not read is left out, as it was before (`nil`).
    enum RecordJSON {
        static func items(_ field: FieldValue?) -> [LabeledValue]? {
            guard case .array(let elements) = parse(field) else { return nil }
            var items: [LabeledValue] = []
            items.reserveCapacity(elements.count)
            for element in elements {
                guard case .object(let members) = element, case .string(let id) = members.optional("id"),
                    case .string(let label) = members.optional("label"),
                    case .string(let value) = members.optional("value"),
                    case .number(let text) = members.optional("modified"), let milliseconds = Double(text)
                else { return nil }
                var item = LabeledValue(id: id, label: label, value: value)
                item.modified = Date(timeIntervalSince1970: milliseconds / 1000)
                items.append(item)
            }
            return items
        }

        static func address(_ field: FieldValue?) -> PostalAddress? {
            guard case .object(let members) = parse(field) else { return nil }
            func part(_ key: String) -> String? {
                guard case .string(let text) = members.optional(key) else { return nil }
                return text
            }
            guard let street = part("street"), let city = part("city"), let region = part("region"),
                let postalCode = part("postalCode"), let country = part("country")
            else { return nil }
            return PostalAddress(street: street, city: city, region: region, postalCode: postalCode, country: country)
        }

        static func strings(_ field: FieldValue?) -> [String]? {
            guard case .array(let elements) = parse(field) else { return nil }
            var strings: [String] = []
            strings.reserveCapacity(elements.count)
            for element in elements {
                guard case .string(let text) = element else { return nil }
                strings.append(text)
            }
            return strings
        }

        private static func parse(_ field: FieldValue?) -> JSONReader.Value? {
            guard let text = field?.stringValue else { return nil }
            return try? JSONReader.parse(Data(text.utf8))
        }
    }
}
