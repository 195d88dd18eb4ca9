import Foundation
import SyncCore
import VCard

/// A contact's photo as the contact keeps it: what the image is, and its SHA-256, which names the
/// image's file on a device and checks a download. The image itself travels as an asset of the
/// contact's record, apart from the contact (a contact stays small; a photo is downloaded only when
/// it is shown or exported).
public struct ContactPhoto: Sendable, Hashable, Codable {
    /// The image's media type, such as `image/jpeg`.
    public var mediaType: String
    /// The image's size in bytes.
    public var size: Int64
    /// The image's SHA-256, 64 lowercase hexadecimal digits.
    public var digest: String

    public init(mediaType: String, size: Int64, digest: String) {
        self.mediaType = mediaType
        self.size = size
        self.digest = digest
    }

    /// What the photo is, for a person: "image/jpeg, 12.4 KB".
    public var summary: String {
        "\(mediaType), \(ByteCountFormatter.string(fromByteCount: size, countStyle: .file))"
    }

    /// The line the photo travels as among the unmodelled properties (see ``Contact/storedExtras``):
    /// a version before photos keeps it through its edits and shows it in its exports as an X- property.
    public static let propertyName = "X-SYNCKIT-PHOTO"

    /// `X-SYNCKIT-PHOTO:<SHA-256>;<size>;<media type>`: no parameters, so that reading a contact takes it
    /// without the vCard parser (a contact is read at every list, search and sync).
    var property: Property {
        Property(name: Self.propertyName, value: "\(digest);\(size);\(mediaType)")
    }

    init?(property: Property) {
        let parts = property.value.split(separator: ";", maxSplits: 2, omittingEmptySubsequences: false)
        guard property.name == Self.propertyName, parts.count == 3, Self.isDigest(String(parts[0])),
            let size = Int64(parts[1]), size >= 0, !parts[2].isEmpty
        else { return nil }
        self.init(mediaType: String(parts[2]), size: size, digest: String(parts[0]))
    }

    /// Whether `text` is a SHA-256 as a photo names it.
    public static func isDigest(_ text: String) -> Bool {
        Hexadecimal.isLowercase(text, digits: 64)
    }

    /// The digest of the photo a contact's stored form holds, found without reading the contact: its line
    /// is `X-SYNCKIT-PHOTO:<digest>;…`.
    public static func digest(inStoredForm data: Data) -> String? {
        // Every contact sent is looked through, most of them with no photo: a byte search of its own, as
        // `Data.range(of:)` went through NSData and was a thirtieth of an upload.
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> String? in
            let name = propertyNameBytes
            guard let base = bytes.baseAddress, let first = name.first, bytes.count >= name.count + 65 else {
                return nil
            }
            var start = 0
            let last = bytes.count - name.count - 65
            while start <= last {
                guard let hit = memchr(base + start, Int32(first), last - start + 1) else { return nil }
                let found = base.distance(to: UnsafeRawPointer(hit))
                if bytes[found..<(found + name.count)].elementsEqual(name) {
                    let colon = found + name.count
                    guard bytes[colon] == UInt8(ascii: ":") else { return nil }
                    let digest = String(decoding: bytes[(colon + 1)..<(colon + 65)], as: UTF8.self)
                    return isDigest(digest) ? digest : nil
                }
                start = found + 1
            }
            return nil
        }
    }

    private static let propertyNameBytes = Array(propertyName.utf8)

    // MARK: vCard

    /// The image of an inline `PHOTO` (vCard 3.0 `ENCODING=b`, or a vCard 4.0 `data:` URI) and its media
    /// type; nil for a photo given by URL, which stays among the unmodelled properties.
    public static func inlineImage(_ property: Property) -> (bytes: Data, mediaType: String)? {
        guard property.name == "PHOTO" else { return nil }
        // A photo's value is long (a 100 KB image is 133 KB of base64): read as bytes, never as characters.
        let value = property.value.utf8
        if value.count > 5, value.prefix(5).map({ $0 | 0x20 }) == Array("data:".utf8) {
            // data:[<media type>][;base64],<data>
            guard let comma = value.firstIndex(of: UInt8(ascii: ",")) else { return nil }
            let header = String(decoding: value[value.index(value.startIndex, offsetBy: 5)..<comma], as: UTF8.self)
                .lowercased().filter { !$0.isWhitespace }
            guard header.hasSuffix(";base64"),
                let bytes = Data(
                    base64Encoded: Data(value[value.index(after: comma)...]), options: .ignoreUnknownCharacters)
            else { return nil }
            let mediaType = String(header.dropLast(7))
            return (bytes, mediaType.isEmpty ? "application/octet-stream" : mediaType)
        }
        let encoding = property.parameters.first { $0.name == "ENCODING" }?.values.first?.lowercased()
        guard encoding == "b" || encoding == "base64",
            let bytes = Data(base64Encoded: Data(value), options: .ignoreUnknownCharacters)
        else { return nil }
        let type = property.parameters.first { $0.name == "TYPE" }?.values.first?.lowercased() ?? "jpeg"
        return (bytes, type.contains("/") ? type : "image/\(type)")
    }

    /// Takes the card's first `PHOTO` out of it when that photo is inline, and returns its image; a photo
    /// given by URL stays in the card.
    public static func takeInlineImage(from card: inout VCard) -> (bytes: Data, mediaType: String)? {
        guard let index = card.properties.firstIndex(where: { $0.name == "PHOTO" }),
            let image = inlineImage(card.properties[index])
        else { return nil }
        card.properties.remove(at: index)
        return image
    }

    /// `PHOTO` for `image` as `version` writes an inline photo: vCard 3.0 `ENCODING=b;TYPE=…`, 4.0 a
    /// `data:` URI.
    public func vCardProperty(image: Data, version: VCard.Version) -> Property {
        let base64 = image.base64EncodedString()
        guard version == .v3 else { return Property(name: "PHOTO", value: "data:\(mediaType);base64,\(base64)") }
        let type = mediaType.hasPrefix("image/") ? String(mediaType.dropFirst(6)).uppercased() : mediaType
        return Property(
            name: "PHOTO",
            parameters: [Parameter(name: "ENCODING", values: ["b"]), Parameter(name: "TYPE", values: [type])],
            value: base64)
    }
}
