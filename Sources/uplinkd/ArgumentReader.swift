/// A small hand-written argument reader: uplinkd has few options, and a parsing library
/// would cost more bytes on the gateway than the whole command line.
struct ArgumentReader {
    private var remaining: ArraySlice<String>

    init(_ arguments: ArraySlice<String>) {
        remaining = arguments
    }

    /// The next argument split as (option, inline value) for `--name=value` forms.
    mutating func next() -> (String, String?)? {
        guard let argument = remaining.popFirst() else { return nil }
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
        }
        return (argument, nil)
    }

    mutating func value(for option: String, inline: String?) throws(UsageError) -> String {
        if let inline { return inline }
        guard let value = remaining.popFirst() else { throw UsageError("\(option) needs a value") }
        return value
    }
}

extension ArgumentReader {
    /// Reads every option of `command` through `handle`, which returns false for an
    /// option it does not know; `--help` prints the help text. Returns the exit status
    /// to end with at once (help printed: 0; a usage error: 64), or nil to go on.
    static func readOptions(
        _ arguments: ArraySlice<String>, for command: String,
        _ handle: (_ option: String, _ inline: String?, _ reader: inout ArgumentReader) throws(UsageError) -> Bool
    ) -> Int32? {
        var reader = ArgumentReader(arguments)
        do throws(UsageError) {
            while let (option, inline) = reader.next() {
                if option == "--help" || option == "-h" {
                    print(helpText)
                    return 0
                }
                guard try handle(option, inline, &reader) else {
                    throw UsageError("unknown argument '\(option.printableEscaped)' for \(command)")
                }
            }
        } catch {
            return usageFailure(error.message)
        }
        return nil
    }
}
