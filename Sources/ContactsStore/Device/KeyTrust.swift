import Foundation

/// Whose account key the person verified, and which verified keys changed, as an app shows them.
public struct KeyTrust: Sendable, Equatable {
    /// User record names of accounts whose verified key the server still gives.
    public var verified: Set<String> = []
    /// User record names of accounts whose verified key changed (refused until verified again).
    public var refused: Set<String> = []
    /// What to tell the person of each refused key.
    public var warnings: [String] = []
    /// The safety number of each account key this device knows, by user record name.
    public var safetyNumbers: [String: String] = [:]

    public init(
        verified: Set<String> = [], refused: Set<String> = [], warnings: [String] = [],
        safetyNumbers: [String: String] = [:]
    ) {
        self.verified = verified
        self.refused = refused
        self.warnings = warnings
        self.safetyNumbers = safetyNumbers
    }
}
