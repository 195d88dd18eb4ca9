import Foundation
import SyncCore

extension Contact {
    /// The JSON a contact's lists and address take inside their (encrypted) string fields, as every
    /// version has written them: objects with sorted keys, dates as milliseconds since 1970. Written and
    /// read by hand: Foundation's JSONEncoder and JSONDecoder took a third of an upload and a download.
    /// A value that does not read is left out, as it was before (`nil`).
    enum RecordJSON {
        static func encode(_ items: [LabeledValue]) -> String {
            var writer = JSONWriter(capacity: 96 * items.count + 2)
            writer.array(items) { writer, item in
                writer.raw("{\"id\":")
                writer.string(item.id)
                writer.raw(",\"label\":")
                writer.string(item.label)
                writer.raw(",\"modified\":")
                writer.raw("\(item.modified.timeIntervalSince1970 * 1000)".utf8)
                writer.raw(",\"value\":")
                writer.string(item.value)
                writer.raw("}")
            }
            return String(decoding: writer.bytes, as: UTF8.self)
        }

        static func encode(_ address: PostalAddress) -> String {
            var writer = JSONWriter(capacity: 128)
            let parts: [(StaticString, String)] = [
                ("city", address.city), ("country", address.country), ("postalCode", address.postalCode),
                ("region", address.region), ("street", address.street),
            ]
            for (index, (key, value)) in parts.enumerated() {
                writer.raw(index == 0 ? "{" : ",")
                writer.key(key)
                writer.string(value)
            }
            writer.raw("}")
            return String(decoding: writer.bytes, as: UTF8.self)
        }

        static func encode(_ strings: [String]) -> String {
            var writer = JSONWriter(capacity: 64)
            writer.array(strings) { writer, string in writer.string(string) }
            return String(decoding: writer.bytes, as: UTF8.self)
        }

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
