import Logging

extension Logger {
    /// A logger that says nothing, for tests that do not look at what is said.
    static let silent = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
}
