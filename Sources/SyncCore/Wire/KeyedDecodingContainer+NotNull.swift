extension KeyedDecodingContainer {
    /// Decodes an optional member that may be left out but not sent as `null`.
    ///
    /// `decodeIfPresent` reads `null` as absent. For this API that would be a trap: a zone ID with
    /// `"ownerName": null` would address the caller's own zone, `"since": null` would restart a
    /// fetch from the beginning. The document gives `null` no meaning, so it is refused.
    func decodeIfPresentNotNull<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key) else { return nil }
        if try decodeNil(forKey: key) {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "null is not allowed here; leave the member out instead")
        }
        return try decode(T.self, forKey: key)
    }
}
