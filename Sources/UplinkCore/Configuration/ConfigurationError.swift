/// A configuration mistake, located: file, line and key.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let key: String?
    public let message: String

    package init(file: String, line: Int?, key: String?, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": "
        // The key is as written in the file: escaped, so a control byte or an escape
        // sequence in it cannot reach the terminal.
        if let key { text += "key '\(key.printableEscaped)': " }
        return text + message
    }
}
