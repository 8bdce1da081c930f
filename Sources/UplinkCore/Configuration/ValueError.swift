/// A value that does not fit its key; the caller adds file, line and key.
package struct ValueError: Error, Sendable, Equatable {
    package let message: String
    package init(_ message: String) { self.message = message }
}
