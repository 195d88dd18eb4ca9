import SyncCore

/// A device's ID, as sent in `X-Device-ID` and in `GET /v1/push?device=…`: the push socket
/// opened with an ID does not hear about changes sent with the same ID.
enum DeviceID {
    /// Checks a device ID (or a writer ID, which follows the same rules) from the wire: absent, or 1 to
    /// 255 bytes without control characters.
    /// - Parameter source: where it came from, named in the error (`the X-Device-ID header`).
    static func validated(_ value: String?, source: String) throws -> String? {
        guard let value else { return nil }
        guard !value.isEmpty, value.utf8.count <= NameRules.maximumNameBytes,
            !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw SyncError(
                .invalidArguments,
                "\(source) must be 1 to 255 bytes without control characters; send an ID or leave it out")
        }
        return value
    }
}
