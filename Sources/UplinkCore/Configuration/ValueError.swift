/// A value that does not fit its key; the caller adds file, line and key.
public struct ValueError: Error, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
}
