import SyncCore
import SyncServer

/// A marker for checking that a push socket received nothing, without waiting a guessed while.
///
/// The test sends the marker through the server's push hub after the action it checks; the hub
/// delivers each socket's messages in order, so whatever the action pushed arrives before the
/// marker. "Nothing before the marker" therefore means "nothing was pushed", however busy the
/// machine. The marker is a change notice for the shared database, which accepts no zones, so no
/// request can cause one.
///
/// ```swift
/// try await laptop.saveZones("Contacts")       // changes nothing
/// try await server.sendPushMarker(to: phone)   // every socket of phone's user gets a marker
/// #expect(try await phoneSocket.messagesBeforeMarker() == [])
/// ```
public enum PushMarker {
    /// The message that marks the point.
    public static let message = PushMessage(event: .databaseChanged, scope: .shared)
}

extension TestServer {
    /// Sends ``PushMarker/message`` to every open push socket of `user`.
    public func sendPushMarker(toUser user: String) async {
        await pushHub.notify(user: user, scope: .shared, excludingDevice: nil)
    }

    /// Sends ``PushMarker/message`` to every open push socket of the user `client` is signed in as.
    public func sendPushMarker(to client: TestClient) async throws {
        await sendPushMarker(toUser: try await client.account().userRecordName)
    }
}

extension PushConnection {
    /// Takes the messages that arrived before the next marker, and the marker; throws ``WaitTimeout``
    /// if no marker arrives within `timeout`.
    public func messagesBeforeMarker(within timeout: Duration = .seconds(60)) async throws -> [PushMessage] {
        var before: [PushMessage] = []
        while true {
            guard let received = await next(within: timeout) else {
                throw WaitTimeout(
                    condition: "the push marker arrives", timeout: timeout,
                    observed: "\(before.count) message(s) before it: \(before)")
            }
            if received.message == PushMarker.message { return before }
            before.append(received.message)
        }
    }
}
