import Foundation

/// Photos for tests: images no other run of bytes looks like, and cards that carry them.
public enum TestPhotos {
    /// An "image" of `count` bytes unlike any other run of bytes, to look for on the server.
    public static func image(_ count: Int, seed: UInt32) -> Data {
        var bytes = Data([0xFF, 0xD8, 0xFF, 0xE0])
        var value = seed
        while bytes.count < count {
            value = value &* 1_664_525 &+ 1_013_904_223
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes.prefix(count)
    }

    public static func card(_ name: String, v3 image: Data?, v4 other: Data? = nil) -> String {
        var lines = ["BEGIN:VCARD", "VERSION:\(other == nil ? "3.0" : "4.0")", "FN:\(name)"]
        if let image {
            // Folded at 75 as vCard 3.0 writers do.
            let text = "PHOTO;ENCODING=b;TYPE=JPEG:" + image.base64EncodedString()
            var folded: [String] = []
            var rest = Substring(text)
            while !rest.isEmpty {
                folded.append((folded.isEmpty ? "" : " ") + rest.prefix(74))
                rest = rest.dropFirst(74)
            }
            lines += folded
        }
        if let other { lines.append("PHOTO:data:image/png;base64," + other.base64EncodedString()) }
        lines.append("END:VCARD")
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
