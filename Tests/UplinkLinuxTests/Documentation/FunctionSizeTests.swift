import Glibc
import Testing
import UplinkLinux

/// No function, initializer, deinitializer, subscript or computed property in Sources/
/// has a body longer than 60 lines, counted from the line of its keyword to the line of
/// its closing brace (issue 51): past that a body does several things, and each of them
/// wants a name of its own. The rule is held by scanning every Swift file, and the
/// scanner is shown on made-up text to count what it must and only that.
@Suite("Function size")
struct FunctionSizeTests {
    // Tests/UplinkLinuxTests/Documentation/FunctionSizeTests.swift -> repository root.
    private static let root = "/" + String(#filePath).split(separator: "/").dropLast(4).joined(separator: "/")

    @Test func noBodyInSourcesIsLongerThanTheLimit() throws {
        var files = 0
        var bodies = 0
        for path in try SwiftBodies.files(under: "Sources", in: Self.root) {
            let text = String(decoding: try SmallFile.readAll("\(Self.root)/\(path)", limit: 4 << 20), as: UTF8.self)
            let found = SwiftBodies.bodies(in: text)
            for body in found where body.lineCount > SwiftBodies.limit {
                Issue.record("\(path):\(body.line): \(body.name) is \(body.lineCount) lines; split it into pieces of at most \(SwiftBodies.limit)")
            }
            files += 1
            bodies += found.count
        }
        // A walk or a scanner that finds nothing would pass the rule above.
        #expect(files > 100)
        #expect(bodies > 1_000)
    }

    /// Made-up bodies of known lengths around the limit, with a brace (or a quote
    /// that would end a string early) in every kind of literal and comment: a
    /// scanner that counted any of them would misplace a closing brace, and a
    /// length or a name below would differ.
    @Test func theScannerCountsOnlyTheBracesOfCode() {
        let traps = [
            #"let a = "}}" + "\"}" + "\\" // } a comment's brace"#,
            #"let b = "\(values.map { "}" + "\(String(describing: $0))" }.joined())""#,
            ##"let c = #"raw } \" \#(count) "#"##,
            ###"let d = ##"raw \#(not interpolated ( "# }"##"###,
            "/* a block comment } /* nested { */ still } */ let e = 1",
            "let f = \"\"\"",
            "    a multi-line string } \" \"\" \\(values.map { \"{\" }) \\\"\"\"",
            "    }",
            "    \"\"\"",
            "let g = \"\\u{7d}\"",
        ]
        func function(_ name: String, lines: Int, traps: [String] = []) -> [String] {
            ["    func \(name)() {"] + traps.map { "        " + $0 }
                + Array(repeating: "        count += 1", count: lines - 2 - traps.count) + ["    }"]
        }
        var source = ["struct Made {", "    var count = 0"]
        source += function("sixtyOne", lines: 61, traps: traps)
        source += function("sixty", lines: 60, traps: traps)
        source += [
            "    /// A requirement-like line without a body is no body: func ghost() {",
            "    var computed: Int {", "        count + 1", "    }",
            "    private(set) var stored = { [1, 2] }()",
            "    init?(text: String) {", "        for var word in text.split(separator: \" \") {",
            "            word = word.dropFirst()", "        }", "        self.init()", "        _ = Made.init()",
            "    }",
            "    @inlinable static func == (lhs: Made, rhs: Made) -> Bool {", "        lhs.count == rhs.count", "    }",
            "    subscript(index: Int) -> Int { index }",
        ]
        source += function("`default`", lines: 3)
        source += ["}", "extension Made {", "    func outer(handler: () -> Void = { }) {"]
        source += function("inner", lines: 4).map { "    " + $0 }
        source += ["    }", "    deinit {}", "}", "protocol Needs {", "    func need() -> Int", "    var value: Int { get }", "}"]
        source += ["extension Needs {", "    func required(_ key: String) -> Int {", "        0", "    }", "}"]
        let found = SwiftBodies.bodies(in: source.joined(separator: "\n")).map { "\($0.line) \($0.name) \($0.lineCount)" }
        #expect(found == [
            "3 func sixtyOne 61", "64 func sixty 60", "125 var computed 3", "129 init 7",
            "136 func == 3", "139 subscript 1", "140 func `default` 3", "145 func outer 6", "146 func inner 4",
            "151 deinit 1", "155 var value 1", "158 func required 3",
        ])
        let tooLong = SwiftBodies.bodies(in: source.joined(separator: "\n")).filter { $0.lineCount > SwiftBodies.limit }
        #expect(tooLong.map(\.name) == ["func sixtyOne"])
    }

    /// An unterminated literal or comment (a file mid-edit) ends the scan quietly
    /// instead of trapping.
    @Test func brokenTextEndsTheScan() {
        for text in ["func f() { \"", "func f() { /* ", "func f() { #\"", "func f() { \"\\(", "func f(", "var"] {
            _ = SwiftBodies.bodies(in: text)
        }
    }
}

/// The bodies of a Swift file's functions, initializers, deinitializers, subscripts
/// and computed properties, each with where it starts and how many lines it spans.
///
/// The text is first blanked: string literals (single-line, multi-line, raw with any
/// number of `#`) and comments (line, and nested block comments) become spaces, line
/// breaks kept, while the code of string interpolations stays, so that only the
/// braces of code are counted. Not handled, for Sources/ has none: regex literals,
/// and `#if` branches that open or close braces unevenly.
enum SwiftBodies {
    static let limit = 60

    struct Body: Equatable {
        /// "func decode", "init", "var text", …
        var name: String
        /// The line of the keyword, from 1.
        var line: Int
        /// From the keyword's line to the closing brace's, both counted.
        var lineCount: Int
    }

    /// The `.swift` files under `directory` of `root`, at any depth, as paths from
    /// `root`, sorted; hidden entries left out.
    static func files(under directory: String, in root: String) throws -> [String] {
        var found: [String] = []
        for name in try SmallFile.directoryEntries("\(root)/\(directory)").sorted() {
            let path = "\(directory)/\(name)"
            var info = stat()
            guard stat("\(root)/\(path)", &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFDIR {
                found += try files(under: path, in: root)
            } else if name.hasSuffix(".swift") {
                found.append(path)
            }
        }
        return found
    }

    static func bodies(in text: String) -> [Body] {
        let tokens = Token.split(blanked(Array(text.utf8)))
        var found: [Body] = []
        for index in tokens.indices {
            guard let name = declaredName(tokens, at: index),
                  let open = bodyStart(tokens, after: index, computedProperty: tokens[index].text == "var"),
                  let close = matchingBrace(tokens, from: open) else { continue }
            found.append(Body(name: name, line: tokens[index].line,
                              lineCount: tokens[close].line - tokens[index].line + 1))
        }
        return found
    }

    // MARK: - Blanking literals and comments

    private enum Context {
        /// Code; `parentheses` counts those open inside an interpolation (nil: not one).
        case code(parentheses: Int?)
        case string(hashes: Int, multiLine: Bool)
    }

    private static let quote = UInt8(ascii: "\""), hash = UInt8(ascii: "#"), slash = UInt8(ascii: "/")
    private static let star = UInt8(ascii: "*"), backslash = UInt8(ascii: "\\"), newline = UInt8(ascii: "\n")

    /// `bytes` with the contents of string literals and comments replaced by spaces
    /// (line breaks kept, so line numbers stay).
    static func blanked(_ bytes: [UInt8]) -> [UInt8] {
        var text = bytes
        var stack: [Context] = [.code(parentheses: nil)]
        var index = 0
        func blank(_ range: Range<Int>) {
            for position in range where text[position] != newline { text[position] = UInt8(ascii: " ") }
        }
        func has(_ byte: UInt8, count: Int, at position: Int) -> Bool {
            position + count <= bytes.count && bytes[position..<position + count].allSatisfy { $0 == byte }
        }
        while index < bytes.count {
            switch stack[stack.count - 1] {
            case .code(let parentheses):
                let step = codeStep(bytes, at: index, parentheses: parentheses)
                blank(index..<index + step.blank)
                index += step.advance
                if let pushed = step.push { stack.append(pushed) }
                if step.pop { stack.removeLast() }
                if let count = step.parentheses { stack[stack.count - 1] = .code(parentheses: count) }
            case .string(let hashes, let multiLine):
                if bytes[index] == backslash && has(hash, count: hashes, at: index + 1) {
                    let after = index + 1 + hashes
                    if after < bytes.count && bytes[after] == UInt8(ascii: "(") {
                        stack.append(.code(parentheses: 0))
                        index = after + 1
                    } else {
                        // An escape: its next character (a quote, a backslash) is no delimiter.
                        let end = min(after + 1, bytes.count)
                        blank(index..<end)
                        index = end
                    }
                } else if has(quote, count: multiLine ? 3 : 1, at: index)
                            && has(hash, count: hashes, at: index + (multiLine ? 3 : 1)) {
                    stack.removeLast()
                    index += (multiLine ? 3 : 1) + hashes
                } else if bytes[index] == newline && !multiLine {
                    // Unterminated (the compiler would refuse it): the line ends it.
                    stack.removeLast()
                } else {
                    blank(index..<index + 1)
                    index += 1
                }
            }
        }
        return text
    }

    /// What one step through code does: how far it moves and how much of that to
    /// blank, and how it changes the stack of contexts.
    private struct Step {
        var advance = 1
        var blank = 0
        var push: Context?
        var pop = false
        /// The interpolation's new count of open parentheses.
        var parentheses: Int?
    }

    private static func codeStep(_ bytes: [UInt8], at index: Int, parentheses: Int?) -> Step {
        let byte = bytes[index]
        let next = index + 1 < bytes.count ? bytes[index + 1] : 0
        if byte == slash && next == slash {
            let end = bytes[index...].firstIndex(of: newline) ?? bytes.count
            return Step(advance: end - index, blank: end - index)
        }
        if byte == slash && next == star {
            let end = blockCommentEnd(bytes, from: index)
            return Step(advance: end - index, blank: end - index)
        }
        if byte == hash || byte == quote {
            var hashes = 0
            while index + hashes < bytes.count && bytes[index + hashes] == hash { hashes += 1 }
            let opening = index + hashes
            guard opening < bytes.count && bytes[opening] == quote else { return Step(advance: max(hashes, 1)) }
            let multiLine = opening + 2 < bytes.count && bytes[opening + 1] == quote && bytes[opening + 2] == quote
            return Step(advance: hashes + (multiLine ? 3 : 1), push: .string(hashes: hashes, multiLine: multiLine))
        }
        guard let open = parentheses else { return Step() }
        if byte == UInt8(ascii: "(") { return Step(parentheses: open + 1) }
        if byte == UInt8(ascii: ")") { return open == 0 ? Step(pop: true) : Step(parentheses: open - 1) }
        return Step()
    }

    /// Just past the `*/` that closes the comment opened at `start`; block comments nest.
    private static func blockCommentEnd(_ bytes: [UInt8], from start: Int) -> Int {
        var depth = 0
        var index = start
        while index < bytes.count {
            let pair = index + 1 < bytes.count ? (bytes[index], bytes[index + 1]) : (bytes[index], 0)
            if pair == (slash, star) {
                depth += 1
                index += 2
            } else if pair == (star, slash) {
                depth -= 1
                index += 2
                if depth == 0 { return index }
            } else {
                index += 1
            }
        }
        return bytes.count
    }

    // MARK: - Declarations

    /// A word (an identifier, a keyword, a number, a `quoted` identifier) or one
    /// character of punctuation, and its line.
    struct Token {
        var text: String
        var line: Int

        static func split(_ bytes: [UInt8]) -> [Token] {
            var tokens: [Token] = []
            var line = 1
            var index = 0
            func isWord(_ byte: UInt8) -> Bool {
                byte >= 0x80 || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
                    || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            }
            while index < bytes.count {
                let byte = bytes[index]
                var end = index + 1
                if byte == newline { line += 1 }
                if byte == UInt8(ascii: "`") {
                    end = (bytes[end...].firstIndex(of: byte) ?? bytes.count - 1) + 1
                } else if isWord(byte) {
                    while end < bytes.count && isWord(bytes[end]) { end += 1 }
                }
                if byte > 0x20 {
                    tokens.append(Token(text: String(decoding: bytes[index..<end], as: UTF8.self), line: line))
                }
                index = end
            }
            return tokens
        }
    }

    private static let declarations: Set<String> = [
        "func", "init", "deinit", "subscript", "var", "let", "struct", "class", "enum", "protocol", "extension",
        "actor", "case", "typealias", "associatedtype", "import", "operator", "precedencegroup", "macro",
    ]
    private static let modifiers: Set<String> = [
        "private", "fileprivate", "internal", "package", "public", "open", "static", "class", "final", "override",
        "lazy", "weak", "unowned", "nonisolated", "dynamic", "required", "convenience", "mutating", "nonmutating",
        "indirect", "optional",
    ]

    private static let operatorCharacters = Set("/=-+!*%<>&|^~?.".map(String.init))

    /// "func name", "init", "deinit", "subscript" or "var name" when the token at
    /// `index` declares one of them; nil for any other token (a call of `.init`, a
    /// `for var`, a label).
    private static func declaredName(_ tokens: [Token], at index: Int) -> String? {
        let keyword = tokens[index].text
        let previous = index > 0 ? tokens[index - 1].text : ""
        let next = index + 1 < tokens.count ? tokens[index + 1].text : ""
        switch keyword {
        case "func":
            guard !next.isEmpty else { return nil }
            guard operatorCharacters.contains(next) else { return "func \(next)" }
            // An operator's name: a token per character.
            let name = tokens[(index + 1)...].prefix { operatorCharacters.contains($0.text) }.map(\.text).joined()
            return "func \(name)"
        case "init": return previous != "." && ["(", "?", "!", "<"].contains(next) ? "init" : nil
        case "deinit", "subscript": return previous != "." ? keyword : nil
        case "var": return startsItsLine(tokens, index) && !next.isEmpty ? "var \(next)" : nil
        default: return nil
        }
    }

    /// Whether only modifiers and attributes come before `index` on its line (`var`
    /// as a property, not in `for var`, `if var`, `case var`).
    private static func startsItsLine(_ tokens: [Token], _ index: Int) -> Bool {
        var position = index - 1
        while position >= 0 && tokens[position].line == tokens[index].line {
            let text = tokens[position].text
            if text == ")" {
                // An attribute's or `private(set)`'s parentheses.
                var depth = 0
                repeat {
                    if tokens[position].text == ")" { depth += 1 }
                    if tokens[position].text == "(" { depth -= 1 }
                    position -= 1
                } while position >= 0 && depth > 0
            } else if modifiers.contains(text) || text == "@" || text == "{" || text == ";" {
                position -= 1
            } else if position > 0 && tokens[position - 1].text == "@" {
                position -= 2
            } else {
                return false
            }
        }
        return true
    }

    /// The `{` that opens the body of the declaration at `index`; nil when it has
    /// none (a requirement, a stored property). The signature is skipped with its
    /// parentheses and brackets (a default value may hold a closure's braces).
    private static func bodyStart(_ tokens: [Token], after index: Int, computedProperty: Bool) -> Int? {
        var depth = 0
        // A function's or a property's name may be any word (`open`, `required`).
        var position = index + (["func", "var"].contains(tokens[index].text) ? 2 : 1)
        while position < tokens.count {
            let text = tokens[position].text
            if text == "(" || text == "[" { depth += 1 }
            if text == ")" || text == "]" { depth -= 1 }
            if depth == 0 {
                if text == "{" { return position }
                if text == "}" || text == ";" || text == "@" || text == "#" || declarations.contains(text)
                    || modifiers.contains(text) { return nil }
                // A property's braces are on its line; `=` makes it stored.
                if computedProperty && (text == "=" || tokens[position].line != tokens[position - 1].line) { return nil }
            }
            position += 1
        }
        return nil
    }

    private static func matchingBrace(_ tokens: [Token], from open: Int) -> Int? {
        var depth = 0
        for position in open..<tokens.count {
            if tokens[position].text == "{" { depth += 1 }
            if tokens[position].text == "}" { depth -= 1 }
            if depth == 0 { return position }
        }
        return nil
    }
}
