import ArgumentParser
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// The plain HTTP reference of `sync-bench server`: a Hummingbird server that does no work. It reads each
/// request's body whole and answers with bytes it was handed before the clock started (the real server's
/// answers to the same requests), so the same bytes cross the same loopback through the same HTTP stack,
/// and what the real server spends beyond this is its own work.
///
/// - `PUT /answers/NAME` stores an answer (before the measurement).
/// - Any `POST` answers with the answer its `X-Reference-Answer: NAME` header names, as JSON.
struct ReferenceServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reference-server",
        abstract: "A plain HTTP server doing no work, for `sync-bench server`'s reference (started by it).",
        shouldDisplay: false)

    /// The header naming the stored answer a request gets.
    static let answerHeader = "X-Reference-Answer"
    /// The largest body either way: a page of 400 contacts is far below it.
    static let maximumBody = 64 << 20

    func run() async throws {
        let answers = Mutex<[String: ByteBuffer]>([:])
        let answerHeader = HTTPField.Name(Self.answerHeader)!
        let router = Router()
        router.put("/answers/{name}") { request, context -> HTTPResponse.Status in
            let name = try context.parameters.require("name")
            let body = try await request.body.collect(upTo: Self.maximumBody)
            answers.withLock { $0[name] = body }
            return .noContent
        }
        router.post("**") { request, _ -> Response in
            _ = try await request.body.collect(upTo: Self.maximumBody)
            guard let name = request.headers[answerHeader], let answer = answers.withLock({ $0[name] })
            else { return Response(status: .notFound) }
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: answer))
        }
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                // What ServerProcess waits for in this program's output.
                let line = "listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            })
        try await app.runService()
    }
}
