import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// Keeps the request schemas of `openapi.yaml` and the server in step, by walking the document:
/// for every operation with a request body, a valid body is accepted; every member the document
/// marks required, left out, answers `400 invalidArguments` naming it; every member sent as
/// `null` (the document marks none nullable) answers the same; every optional member left out is
/// accepted; header and path parameters outside their schema are refused. None of the refused
/// requests changes anything.
@Suite("openapi.yaml request schemas", .onEveryBackend)
struct OpenAPIRequestSchemaTests {
    /// A place in a JSON body.
    enum Step: Hashable {
        case key(String)
        case index(Int)
    }

    /// One change to a valid body, and what the server must answer.
    struct Mutation: CustomStringConvertible {
        enum Kind { case removeRequired, null, removeOptional }
        var operation: String
        var kind: Kind
        var path: [Step]

        /// The path as the server's messages write it: `saves[0].recordID.zoneID`.
        var name: String { OpenAPIRequestSchemaTests.name(of: path) }
        var description: String { "\(operation): \(kind) \(name)" }
    }

    static func name(of path: [Step]) -> String {
        var text = ""
        for step in path {
            switch step {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    // MARK: Reading the document

    static func document() throws -> [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("openapi.yaml")
        let parsed = try MiniYAML.parse(try String(contentsOf: url, encoding: .utf8))
        return try #require(parsed as? [String: Any])
    }

    /// Follows `$ref`s and `allOf`s to the schema they stand for.
    static func resolve(_ schema: [String: Any], in document: [String: Any]) throws -> [String: Any] {
        if let reference = schema["$ref"] as? String {
            var node: Any = document
            for part in reference.dropFirst(2).split(separator: "/") {
                node = try #require((node as? [String: Any])?[String(part)], "unresolvable \(reference)")
            }
            return try resolve(try #require(node as? [String: Any]), in: document)
        }
        if let all = schema["allOf"] as? [Any], all.count == 1, let only = all.first as? [String: Any] {
            return try resolve(only, in: document)
        }
        return schema
    }

    /// Every mutation of `value` that the schema says must be refused or accepted.
    static func mutations(
        of value: Any, schema: [String: Any], at path: [Step], operation: String, document: [String: Any]
    ) throws -> [Mutation] {
        var schema = try resolve(schema, in: document)
        // A oneOf with a discriminator (field values): the variant the value names.
        if let discriminator = schema["discriminator"] as? [String: Any],
            let property = discriminator["propertyName"] as? String,
            let mapping = discriminator["mapping"] as? [String: Any],
            let chosen = (value as? [String: Any])?[property] as? String,
            let reference = mapping[chosen] as? String
        {
            schema = try resolve(["$ref": reference], in: document)
        }
        var result: [Mutation] = []
        if let object = value as? [String: Any] {
            let properties = schema["properties"] as? [String: Any] ?? [:]
            let required = (schema["required"] as? [Any] ?? []).compactMap { $0 as? String }
            for (name, propertySchema) in properties {
                let memberPath = path + [.key(name)]
                if required.contains(name) {
                    result.append(Mutation(operation: operation, kind: .removeRequired, path: memberPath))
                } else if object[name] != nil {
                    result.append(Mutation(operation: operation, kind: .removeOptional, path: memberPath))
                }
                if (try resolve(propertySchema as? [String: Any] ?? [:], in: document))["nullable"] as? String != "true"
                {
                    result.append(Mutation(operation: operation, kind: .null, path: memberPath))
                }
                if let member = object[name] {
                    result += try mutations(
                        of: member, schema: propertySchema as? [String: Any] ?? [:], at: memberPath,
                        operation: operation, document: document)
                }
            }
            if let additional = schema["additionalProperties"] as? [String: Any] {
                for (key, member) in object where properties[key] == nil {
                    result += try mutations(
                        of: member, schema: additional, at: path + [.key(key)], operation: operation,
                        document: document)
                }
            }
        } else if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (index, element) in array.enumerated() {
                result += try mutations(
                    of: element, schema: items, at: path + [.index(index)], operation: operation, document: document)
            }
        }
        return result
    }

    /// `value` with the member at `path` removed, or set to null.
    static func applying(_ kind: Mutation.Kind, at path: [Step], to value: Any) -> Any {
        guard let step = path.first else { return value }
        let rest = Array(path.dropFirst())
        switch (step, value) {
        case (.key(let key), var object as [String: Any]):
            if rest.isEmpty {
                if kind == .null { object[key] = NSNull() } else { object[key] = nil }
            } else if let member = object[key] {
                object[key] = applying(kind, at: rest, to: member)
            }
            return object
        case (.index(let index), var array as [Any]) where array.indices.contains(index):
            array[index] = applying(kind, at: rest, to: array[index])
            return array
        default:
            return value
        }
    }

    // MARK: The walk

    /// A valid body for each operation that takes one, using every optional member the
    /// document lists. `DATABASE_TOKEN` and `ZONE_TOKEN` stand for tokens fetched first,
    /// `GRACE` for the user Ada shares her Contacts zone with and `SHARE_TOKEN` for its share.
    /// (Save and fetch share requests leave out the members of record-hierarchy shares: each body is
    /// sent again with each member left out, and a zone is shared whole or record by record, never
    /// both; `HierarchySharingTests` refuses their bad forms.)
    static let validBodies: [String: String] = [
        "createAssetUpload": #"{"size":4096}"#,
        "lookupUsers": #"{"usernames":["grace","nobody"]}"#,
        "saveShare":
            #"{"zoneID":{"zoneName":"Contacts","ownerName":"__defaultOwner__"},"publicPermission":"none","participants":[{"userRecordName":"GRACE","permission":"readWrite","encryptionKey":{"keyVersion":1,"wrappedKey":"AQID"}}],"invitationKey":{"keyVersion":1,"wrappedKey":"AQID"}}"#,
        "fetchShare": #"{"zoneID":{"zoneName":"Contacts","ownerName":"__defaultOwner__"}}"#,
        "deleteShare": #"{"zoneID":{"zoneName":"Gone","ownerName":"__defaultOwner__"},"shareRecordName":"share-gone"}"#,
        "fetchShareMetadata": #"{"token":"SHARE_TOKEN"}"#,
        "acceptShare": #"{"token":"SHARE_TOKEN","encryptionKey":{"keyVersion":1,"wrappedKey":"AQID"}}"#,
        "declineShare": #"{"token":"SHARE_TOKEN"}"#,
        "createAccount": #"{"username":"walker","password":"long enough"}"#,
        "createSession": #"{"username":"walker","password":"long enough","deviceLabel":"walker's laptop"}"#,
        "changePassword": #"{"oldPassword":"correct horse battery","newPassword":"correct horse battery"}"#,
        "deleteAccount": #"{"password":"correct horse battery"}"#,
        "listZones": "{}",
        "modifyZones":
            #"{"saves":[{"zoneID":{"zoneName":"Walk","ownerName":"__defaultOwner__"},"encryptionKey":{"keyVersion":1,"wrappedKey":"AQID"}}],"deletes":[{"zoneName":"Gone","ownerName":"__defaultOwner__"}]}"#,
        "putAccountEncryption":
            #"{"salt":"AAECAwQFBgcICQoLDA0ODw==","costN":1024,"blockSizeR":8,"parallelismP":1,"keyVersion":1,"verifier":"AQID"}"#,
        "putAccountKeyPair":
            #"{"publicKey":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","wrappedPrivateKey":"AQID"}"#,
        "changeAccountEncryption": """
        {"expectedKeyVersion":1,"settings":{"salt":"AAECAwQFBgcICQoLDA0ODw==","costN":1024,"blockSizeR":8,"parallelismP":1,"keyVersion":2,"verifier":"AgID"},
        "zoneKeys":[{"zoneID":{"zoneName":"Keyed","ownerName":"__defaultOwner__"},"encryptionKey":{"keyVersion":1,"wrappedKey":"AgIE"}}],
        "sharedZoneKeys":[],"keyPair":{"publicKey":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","wrappedPrivateKey":"AgID"}}
        """,
        "resetEncryptedData": "{}",
        "putAccountRecovery": """
        {"expectedKeyVersion":1,"setup":{"recovery":{"publicKey":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
        "keyTag":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","bindingTag":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="},"sealedAccountKey":"AQID",
        "verifierHash":"A5BYxvLAy0ksUzsKTRTvd8wPeKvMztUofYShogEc+4E="}}
        """,
        // The verifier whose SHA-256 the body above sets up.
        "openAccountRecovery": #"{"verifier":"AQID"}"#,
        "fetchDatabaseChanges": #"{"since":"DATABASE_TOKEN","resultsLimit":5}"#,
        "fetchZoneChanges":
            #"{"zoneID":{"zoneName":"Contacts","ownerName":"__defaultOwner__"},"since":"ZONE_TOKEN","resultsLimit":5,"excludingWriter":"w","desiredKeys":["name"]}"#,
        "lookupRecords":
            #"{"recordIDs":[{"recordName":"Grace","zoneID":{"zoneName":"Contacts","ownerName":"__defaultOwner__"}}],"desiredKeys":[]}"#,
        "modifyRecords": """
        {"saves":[{"recordID":{"recordName":"Walker","zoneID":{"zoneName":"Contacts","ownerName":"__defaultOwner__"}},
        "recordType":"Contact","fields":{
          "s":{"type":"string","value":"Ada"},"i":{"type":"int64","value":42},"d":{"type":"double","value":0.5},
          "t":{"type":"date","value":1700000000000},"b":{"type":"bytes","value":"AAE="},
          "r":{"type":"reference","value":{"recordID":{"recordName":"Grace","zoneID":{"zoneName":"Contacts","ownerName":"__defaultOwner__"}},"action":"none"}},
          "l":{"type":"list","value":[{"type":"string","value":"a"}]},"e":{"type":"encrypted","value":"AQID"}},
        "changedKeys":["s"],"recordChangeTag":"x","creationDate":1700000000000,"modificationDate":1700000000000,
        "creatorUserRecordName":"_someone","lastModifiedUserRecordName":"_someone",
        "parent":{"recordID":{"recordName":"Grace","zoneID":{"zoneName":"Contacts","ownerName":"__defaultOwner__"}},"action":"none"},
        "share":{"recordID":{"recordName":"share-x","zoneID":{"zoneName":"Contacts","ownerName":"__defaultOwner__"}},"action":"none"}}],
        "deletes":[{"recordName":"Nobody","zoneID":{"zoneName":"Contacts","ownerName":"__defaultOwner__"}}],
        "savePolicy":"allKeys","atomic":false,"clientRequestID":"REQUEST_ID"}
        """,
    ]

    /// An operation with a request body: its method, path, schema and parameters.
    struct Operation {
        var id: String
        var method: RequestMethod
        var path: String
        var bodyRequired: Bool
        var schema: [String: Any]
        var parameters: [[String: Any]]
    }

    static func operations(in document: [String: Any]) throws -> [Operation] {
        var result: [Operation] = []
        for (path, item) in try #require(document["paths"] as? [String: Any]) {
            guard let item = item as? [String: Any] else { continue }
            let shared = item["parameters"] as? [Any] ?? []
            for (method, operation) in item {
                guard let requestMethod = RequestMethod(rawValue: method.uppercased()),
                    let operation = operation as? [String: Any],
                    let body = operation["requestBody"] as? [String: Any]
                else { continue }
                let types = try #require(body["content"] as? [String: Any])
                // An upload's bytes: a binary body, no members to check.
                if types.keys.sorted() == ["application/octet-stream"] { continue }
                let content = try #require(types["application/json"] as? [String: Any])
                let parameters = try (shared + (operation["parameters"] as? [Any] ?? [])).map {
                    try resolve(try #require($0 as? [String: Any]), in: document)
                }
                result.append(
                    Operation(
                        id: try #require(operation["operationId"] as? String), method: requestMethod, path: path,
                        bodyRequired: body["required"] as? String == "true",
                        schema: try #require(content["schema"] as? [String: Any]), parameters: parameters))
            }
        }
        return result.sorted { $0.id < $1.id }
    }

    /// Who sends an operation: nobody signed in for signing up and in, Grace for what someone
    /// invited does, Ada for the rest.
    static func client(for operation: String, anonymous: TestClient, ada: TestClient, grace: TestClient) -> TestClient {
        switch operation {
        case "createAccount", "createSession": anonymous
        case "acceptShare", "fetchShareMetadata": grace
        default: ada
        }
    }

    @Test("every required member is required, nothing is nullable, and every optional member is optional")
    func requestSchemasMatchTheServer() async throws {
        let document = try Self.document()
        let operations = try Self.operations(in: document)
        #expect(operations.count >= 8, "the walk found only \(operations.map(\.id))")
        try await withServer { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let grace = try await anonymous.signedUp(username: "grace")
            let graceID = try await grace.account().userRecordName
            try await ada.saveZones("Contacts", "Gone")
            try await ada.save([contact("Grace")])
            let share = try await ada.saveShare(
                SaveShareRequest(
                    zoneID: contactsZone, participants: [.init(userRecordName: graceID, permission: .readWrite)]))
            let databaseToken = try await ada.fetchDatabaseChanges().changeToken.data.base64EncodedString()
            let zoneToken = try await ada.fetchZoneChanges(contactsZone).changeToken.data.base64EncodedString()

            func body(for operation: Operation) throws -> Any {
                let text = try #require(Self.validBodies[operation.id], "no valid body for \(operation.id)")
                    .replacingOccurrences(of: "DATABASE_TOKEN", with: databaseToken)
                    .replacingOccurrences(of: "ZONE_TOKEN", with: zoneToken)
                    .replacingOccurrences(of: "REQUEST_ID", with: UUID().uuidString)
                    .replacingOccurrences(of: "SHARE_TOKEN", with: share.token)
                    .replacingOccurrences(of: "GRACE", with: graceID)
                return try JSONSerialization.jsonObject(with: Data(text.utf8))
            }
            func send(
                _ operation: Operation, _ value: Any, headers: [(String, String)] = [], scope: String = "private",
                as sender: TestClient? = nil
            ) async throws -> HTTPAnswer {
                let client = sender ?? Self.client(for: operation.id, anonymous: anonymous, ada: ada, grace: grace)
                return try await client.send(
                    operation.method, operation.path.replacingOccurrences(of: "{scope}", with: scope),
                    body: try JSONSerialization.data(withJSONObject: value), headers: headers)
            }

            // Valid bodies, and valid bodies missing an optional member, are accepted.
            var accepted: [String] = []
            var refusals: [(Operation, Mutation)] = []
            // A valid deletion takes its account away: each is sent by an account of its own (the
            // refused ones, by Ada: they never reach the password).
            // A passphrase change must cover what the account has: each is sent by a new account
            // with settings (key version 1) and one keyed zone.
            func sender(_ operation: Operation) async throws -> TestClient? {
                switch operation.id {
                case "deleteAccount":
                    return try await anonymous.signedUp(username: "doomed-\(UUID().uuidString.prefix(8))")
                case "declineShare":
                    // Each decline by someone newly invited (Grace keeps her place).
                    let invited = try await anonymous.signedUp(username: "invited-\(UUID().uuidString.prefix(8))")
                    _ = try await ada.saveShare(
                        SaveShareRequest(
                            zoneID: contactsZone,
                            participants: [
                                .init(userRecordName: graceID, permission: .readWrite),
                                .init(
                                    userRecordName: try await invited.account().userRecordName, permission: .readOnly),
                            ]))
                    return invited
                case "putAccountRecovery", "openAccountRecovery":
                    let client = try await anonymous.signedUp(username: "recover-\(UUID().uuidString.prefix(8))")
                    #expect(
                        try await client.send(
                            .put, "/v1/account/encryption",
                            body: Data(try #require(Self.validBodies["putAccountEncryption"]).utf8)
                        ).status == 201)
                    #expect(
                        try await client.send(
                            .put, "/v1/account/encryption/recovery",
                            body: Data(try #require(Self.validBodies["putAccountRecovery"]).utf8)
                        ).status == 200)
                    return client
                case "changeAccountEncryption":
                    let client = try await anonymous.signedUp(username: "rewrap-\(UUID().uuidString.prefix(8))")
                    let settings = try #require(Self.validBodies["putAccountEncryption"])
                    #expect(
                        try await client.send(.put, "/v1/account/encryption", body: Data(settings.utf8)).status == 201)
                    _ = try await client.modifyZones(
                        ModifyZonesRequest(saves: [
                            RecordZone(
                                zoneID: RecordZone.ID(zoneName: "Keyed"),
                                encryptionKey: RecordZone.EncryptionKey(keyVersion: 1, wrappedKey: Data([1, 2, 4])))
                        ]))
                    return client
                default:
                    return nil
                }
            }
            for operation in operations {
                let valid = try body(for: operation)
                let answer = try await send(operation, valid, as: try await sender(operation))
                #expect(
                    (200..<300).contains(answer.status),
                    "\(operation.id) refused its valid body: \(answer.error as Any)")
                let found = try Self.mutations(
                    of: valid, schema: operation.schema, at: [], operation: operation.id, document: document)
                for mutation in found where mutation.kind == .removeOptional {
                    let answer = try await send(
                        operation, Self.applying(.removeOptional, at: mutation.path, to: try body(for: operation)),
                        as: try await sender(operation))
                    #expect((200..<300).contains(answer.status), "\(mutation) refused: \(answer.error as Any)")
                    accepted.append(mutation.description)
                }
                refusals += found.filter { $0.kind != .removeOptional }.map { (operation, $0) }
            }
            #expect(accepted.count >= 15, "only \(accepted.count) optional members were tried")
            #expect(refusals.count >= 80, "only \(refusals.count) required or null cases were found")

            // Missing required members, nulls and bad parameters are refused and change nothing.
            let before = (try await ada.fetchDatabaseChanges().changeToken, try await ada.contents())
            for (operation, mutation) in refusals {
                let answer = try await send(
                    operation, Self.applying(mutation.kind, at: mutation.path, to: try body(for: operation)))
                #expect(answer.status == 400, "\(mutation): HTTP \(answer.status)")
                #expect(answer.error?.code == .invalidArguments, "\(mutation): \(answer.error as Any)")
                #expect(
                    answer.error?.message.contains(mutation.name) == true,
                    "\(mutation): the message does not name it: \(answer.error?.message ?? "none")")
            }
            var parameterChecks = 0
            for operation in operations {
                for parameter in operation.parameters {
                    let name = try #require(parameter["name"] as? String)
                    let schema = try Self.resolve(parameter["schema"] as? [String: Any] ?? [:], in: document)
                    let answer: HTTPAnswer
                    switch parameter["in"] as? String {
                    case "header" where schema["minLength"] as? String == "1":
                        answer = try await send(operation, try body(for: operation), headers: [(name, "")])
                    case "path" where schema["enum"] != nil:
                        answer = try await send(operation, try body(for: operation), scope: "public")
                    default:
                        continue
                    }
                    parameterChecks += 1
                    #expect(answer.status == 400, "\(operation.id) with a bad \(name): HTTP \(answer.status)")
                    #expect(answer.error?.code == .invalidArguments)
                }
                if operation.bodyRequired {
                    let client = Self.client(for: operation.id, anonymous: anonymous, ada: ada, grace: grace)
                    let answer = try await client.send(
                        operation.method, operation.path.replacingOccurrences(of: "{scope}", with: "private"),
                        body: Data())
                    #expect(answer.status == 400, "\(operation.id) accepted an empty body")
                    #expect(answer.error?.message.contains("empty") == true)
                }
            }
            #expect(parameterChecks >= 8)
            let after = (try await ada.fetchDatabaseChanges().changeToken, try await ada.contents())
            #expect(after.0 == before.0 && after.1 == before.1, "a refused request changed stored data")
            #expect(try await server.store.account(username: "walker") != nil)
        }
    }
}
