/// The cost of deriving an account key from a passphrase with scrypt.
///
/// These travel with ``EncryptionSettings`` and so come back from the server, which may be hostile or
/// damaged: every initialiser (including decoding) checks them against fixed bounds before anything is
/// derived, so settings from the network can neither trap, nor allocate more than
/// ``maximumMemoryBytes``, nor ask for more than ``maximumWork`` scrypt block mixes.
public struct ScryptParameters: Codable, Sendable, Hashable {
    /// The CPU and memory cost N: a power of two. Memory use is 128 × N × r bytes.
    public let costN: Int
    /// The block size r.
    public let blockSizeR: Int
    /// The parallelism p (BoringSSL runs the p lanes one after another, so it multiplies time, not memory).
    public let parallelismP: Int

    /// The default: N = 2^15, r = 8, p = 1 (32 MiB, scrypt's interactive-login figure).
    public static let `default` = ScryptParameters(uncheckedCostN: 1 << 15, blockSizeR: 8, parallelismP: 1)

    /// The smallest N accepted, so that a passphrase is never guarded by a trivially cheap derivation.
    public static let minimumCostN = 1 << 10
    /// The largest N accepted.
    public static let maximumCostN = 1 << 20
    /// The largest r and the largest p accepted. r stays at most 16 because swift-crypto gives BoringSSL a
    /// memory limit of 128·N·r·p plus one page, which for p = 1 holds scrypt's two extra blocks only
    /// while 256·r fits in a 4 KiB page.
    public static let maximumBlockSizeR = 16
    /// The largest p accepted.
    public static let maximumParallelismP = 16
    /// The most memory a derivation may take (128 × N × r bytes): 256 MiB.
    public static let maximumMemoryBytes = 256 << 20
    /// The most work a derivation may take, as N × r × p: 32 times the default's.
    public static let maximumWork = 1 << 23

    /// Creates parameters, refusing any outside the bounds above with ``EncryptionError/Code/invalidSettings``.
    public init(costN: Int, blockSizeR: Int, parallelismP: Int) throws {
        try Self.check(costN: costN, blockSizeR: blockSizeR, parallelismP: parallelismP)
        self.init(uncheckedCostN: costN, blockSizeR: blockSizeR, parallelismP: parallelismP)
    }

    private init(uncheckedCostN costN: Int, blockSizeR: Int, parallelismP: Int) {
        self.costN = costN
        self.blockSizeR = blockSizeR
        self.parallelismP = parallelismP
    }

    private enum CodingKeys: String, CodingKey {
        case costN
        case blockSizeR
        case parallelismP
    }

    /// Decodes parameters and checks them: a decoded value is as safe to derive with as a created one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            costN: container.decode(Int.self, forKey: .costN),
            blockSizeR: container.decode(Int.self, forKey: .blockSizeR),
            parallelismP: container.decode(Int.self, forKey: .parallelismP)
        )
    }

    /// Each check relies only on the ones before it, so that nothing here can overflow.
    private static func check(costN: Int, blockSizeR: Int, parallelismP: Int) throws {
        guard costN >= minimumCostN, costN <= maximumCostN else {
            throw EncryptionError.invalidSettings(
                "scrypt cost N = \(costN) is outside \(minimumCostN)...\(maximumCostN)")
        }
        guard costN & (costN - 1) == 0 else {
            throw EncryptionError.invalidSettings("scrypt cost N = \(costN) is not a power of two")
        }
        guard (1...maximumBlockSizeR).contains(blockSizeR) else {
            throw EncryptionError.invalidSettings(
                "scrypt block size r = \(blockSizeR) is outside 1...\(maximumBlockSizeR)")
        }
        guard (1...maximumParallelismP).contains(parallelismP) else {
            throw EncryptionError.invalidSettings(
                "scrypt parallelism p = \(parallelismP) is outside 1...\(maximumParallelismP)")
        }
        // scrypt itself requires N < 2^(16·r); only r = 1 can break it within the bounds above.
        guard 16 * blockSizeR >= Int.bitWidth - 1 || costN < 1 << (16 * blockSizeR) else {
            throw EncryptionError.invalidSettings(
                "scrypt cost N = \(costN) is too large for block size r = \(blockSizeR) (N must be below 2^(16·r))")
        }
        // Divisions, not products, so that the bounds hold on a 32-bit Int too.
        guard costN <= maximumMemoryBytes / (128 * blockSizeR) else {
            throw EncryptionError.invalidSettings(
                "scrypt N = \(costN) with r = \(blockSizeR) needs more memory (128 × N × r bytes) than the "
                    + "\(maximumMemoryBytes >> 20) MiB allowed")
        }
        guard costN <= maximumWork / (blockSizeR * parallelismP) else {
            throw EncryptionError.invalidSettings(
                "scrypt N × r × p = \(costN) × \(blockSizeR) × \(parallelismP) is more work than the "
                    + "\(maximumWork) allowed")
        }
    }
}
