import Foundation

/// An error from the sync server or engine, with CloudKit's error codes.
///
/// Mirrors `CKError`: a ``code`` names what happened; some codes carry more, such as
/// ``retryAfter`` for `requestRateLimited` and `serviceUnavailable`, or ``serverRecordValue``
/// for `serverRecordChanged` (the client library's `serverRecord` hands it back as a `Record`). On the wire it is the error body of every failed request and
/// of every failed item: `{"code": "zoneNotFound", "message": "…"}`.
public struct SyncError: Error, Codable, Sendable, Hashable, CustomStringConvertible {
    /// A CloudKit error code, by name. New codes can be added without breaking anyone.
    public struct Code: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let internalError = Code(rawValue: "internalError")
        public static let partialFailure = Code(rawValue: "partialFailure")
        public static let networkUnavailable = Code(rawValue: "networkUnavailable")
        public static let networkFailure = Code(rawValue: "networkFailure")
        public static let serviceUnavailable = Code(rawValue: "serviceUnavailable")
        public static let requestRateLimited = Code(rawValue: "requestRateLimited")
        public static let notAuthenticated = Code(rawValue: "notAuthenticated")
        public static let permissionFailure = Code(rawValue: "permissionFailure")
        public static let unknownItem = Code(rawValue: "unknownItem")
        public static let invalidArguments = Code(rawValue: "invalidArguments")
        public static let serverRecordChanged = Code(rawValue: "serverRecordChanged")
        public static let serverRejectedRequest = Code(rawValue: "serverRejectedRequest")
        public static let constraintViolation = Code(rawValue: "constraintViolation")
        public static let operationCancelled = Code(rawValue: "operationCancelled")
        public static let changeTokenExpired = Code(rawValue: "changeTokenExpired")
        public static let batchRequestFailed = Code(rawValue: "batchRequestFailed")
        public static let zoneBusy = Code(rawValue: "zoneBusy")
        public static let badDatabase = Code(rawValue: "badDatabase")
        public static let quotaExceeded = Code(rawValue: "quotaExceeded")
        public static let zoneNotFound = Code(rawValue: "zoneNotFound")
        public static let limitExceeded = Code(rawValue: "limitExceeded")
        public static let userDeletedZone = Code(rawValue: "userDeletedZone")
        public static let accountTemporarilyUnavailable = Code(rawValue: "accountTemporarilyUnavailable")
        public static let alreadyShared = Code(rawValue: "alreadyShared")
        public static let tooManyParticipants = Code(rawValue: "tooManyParticipants")

        /// The HTTP status the server answers with when this error fails a whole request.
        public var httpStatus: Int {
            switch self {
            case .invalidArguments: 400
            case .notAuthenticated: 401
            case .permissionFailure, .badDatabase: 403
            case .zoneNotFound, .unknownItem, .userDeletedZone: 404
            case .serverRecordChanged, .batchRequestFailed, .constraintViolation, .alreadyShared: 409
            case .changeTokenExpired: 410
            case .limitExceeded, .quotaExceeded, .tooManyParticipants: 413
            case .requestRateLimited: 429
            case .serviceUnavailable, .zoneBusy, .accountTemporarilyUnavailable: 503
            default: 500
            }
        }

        /// Whether a client should retry the same request later (CKSyncEngine's automatic-retry list).
        public var isTransient: Bool {
            switch self {
            case .networkFailure, .networkUnavailable, .serviceUnavailable, .requestRateLimited, .zoneBusy,
                .notAuthenticated, .accountTemporarilyUnavailable:
                true
            default: false
            }
        }
    }

    /// What happened.
    public var code: Code
    /// A sentence a person can act on.
    public var message: String
    /// Seconds to wait before retrying, for `requestRateLimited`, `serviceUnavailable` and `zoneBusy`.
    public var retryAfter: Double?
    /// For `serverRecordChanged`: the record as the server has it now.
    public var serverRecordValue: RecordValue?
    /// For `serverRecordChanged` of a save: the record as the client sent it (the client library's, not on
    /// the wire).
    public var clientRecordValue: RecordValue?
    /// For `serverRecordChanged` of a save: the record the client's changes were made to, as it last came
    /// from the server (``RecordValue/ancestor``; the client library's, not on the wire).
    public var ancestorRecordValue: RecordValue?
    /// For `partialFailure`: what failed, by record ID (the client library's, not on the wire).
    public var partialErrorsByRecordID: [RecordValue.ID: SyncError] = [:]
    /// For `partialFailure`: what failed, by zone ID (the client library's, not on the wire).
    public var partialErrorsByZoneID: [RecordZone.ID: SyncError] = [:]
    /// For `serverRecordChanged` from `PUT /v1/account/encryption`: the settings the account has
    /// already, which a device that raced another adopts in place of its own.
    public var serverEncryptionSettings: AccountEncryptionSettings?
    /// Why a request was refused, where the code alone does not say enough for a client to act:
    /// a session ended on another device, an account deleted or disabled (see ``Reason``).
    public var reason: Reason?
    /// With `quotaExceeded`: the account's storage in use and its limit.
    public var quota: StorageUsage?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, retryAfter: Double? = nil, serverRecordValue: RecordValue? = nil,
        serverEncryptionSettings: AccountEncryptionSettings? = nil
    ) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.serverRecordValue = serverRecordValue
        self.serverEncryptionSettings = serverEncryptionSettings
    }

    /// The longest wait a server may ask for, in seconds (a week).
    public static let maximumRetryAfter: Double = 7 * 24 * 3600

    /// Whether `seconds` is a wait a client can honour: a finite number from 0 to
    /// ``maximumRetryAfter``. Anything else from a server (a hostile one could send `1e308`) is
    /// refused where it is read, before it reaches a `Duration` or a sleep.
    public static func isValid(retryAfter seconds: Double) -> Bool {
        seconds.isFinite && seconds >= 0 && seconds <= maximumRetryAfter
    }

    private enum CodingKeys: String, CodingKey {
        case code, message, retryAfter
        case serverRecordValue = "serverRecord"
        case serverEncryptionSettings, reason, quota
    }

    /// Decodes an error, refusing a `retryAfter` no client could wait for.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decode(Code.self, forKey: .code)
        message = try container.decode(String.self, forKey: .message)
        retryAfter = try container.decodeIfPresentNotNull(Double.self, forKey: .retryAfter)
        if let retryAfter, !Self.isValid(retryAfter: retryAfter) {
            throw DecodingError.dataCorruptedError(
                forKey: .retryAfter, in: container,
                debugDescription: "\(retryAfter) is not a wait in seconds from 0 to \(Int(Self.maximumRetryAfter))")
        }
        serverRecordValue = try container.decodeIfPresentNotNull(RecordValue.self, forKey: .serverRecordValue)
        serverEncryptionSettings = try container.decodeIfPresentNotNull(
            AccountEncryptionSettings.self, forKey: .serverEncryptionSettings)
        reason = try container.decodeIfPresentNotNull(Reason.self, forKey: .reason)
        quota = try container.decodeIfPresentNotNull(StorageUsage.self, forKey: .quota)
    }

    public var description: String { "\(code): \(message)" }

    /// Whether the same request may succeed later: the code's ``Code/isTransient``, except for a
    /// session the server ended for good (``Reason/endsSession``), which no retry can bring back.
    public var isTransient: Bool {
        code.isTransient && !(reason?.endsSession ?? false)
    }
}

extension SyncError {
    /// Why a request was refused, beyond its code. New reasons may appear: a client treats one it
    /// does not know as the code alone.
    public struct Reason: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// `notAuthenticated`: the session was ended from another session (`DELETE
        /// /v1/account/sessions/{id}`, ending all others, or a password change). Retrying with
        /// the same token cannot succeed: the device must sign in again.
        public static let sessionEnded = Reason(rawValue: "sessionEnded")
        /// `notAuthenticated`: the session reached its sliding or absolute lifetime.
        public static let sessionExpired = Reason(rawValue: "sessionExpired")
        /// `notAuthenticated`: the account was deleted.
        public static let accountDeleted = Reason(rawValue: "accountDeleted")
        /// `notAuthenticated`: an operator disabled the account (`sync-server admin accounts disable`).
        public static let accountDisabled = Reason(rawValue: "accountDisabled")
        /// `changeTokenExpired`: the change token was not issued by this server, or was altered.
        public static let changeTokenInvalid = Reason(rawValue: "changeTokenInvalid")
        /// `notAuthenticated`, from the client library, never the server: the passphrase a device holds
        /// does not open the account's current encryption settings. For a passphrase the device checked
        /// before, it was changed (or the encrypted data reset) on another device: the device needs
        /// the new one, and keeps its data and pending changes until then.
        public static let passphraseRejected = Reason(rawValue: "passphraseRejected")
        /// `permissionFailure`, from the client library, never the server: the public key the server gave
        /// for an account differs from the one this device's person verified for it. Nothing is shared
        /// with that key, and no share is accepted as coming from it, until the person verifies again.
        public static let verifiedKeyChanged = Reason(rawValue: "verifiedKeyChanged")

        /// Whether signing in again is the only way on: the token will never be accepted again.
        public var endsSession: Bool {
            self == .sessionEnded || self == .sessionExpired || self == .accountDeleted || self == .accountDisabled
        }
    }
}
