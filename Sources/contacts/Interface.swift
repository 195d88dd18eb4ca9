import ContactsCore
import Foundation

/// Opens the full-screen app.
func runInterface(_ global: GlobalOptions) async throws {
    throw CommandFailure("the full-screen app is not built yet; see `contacts --help` for the commands")
}
