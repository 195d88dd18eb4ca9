import Testing

@testable import ContactsTUI
