/// A device-level failure with a message that says what to do.
public struct DeviceError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
