import UplinkLinux

/// A manual page read in one well-defined way, for tests that hold a page to the code:
/// its `.SH` sections by title, each with the names its entries are tagged with and
/// the words of its text. An entry is a `.TP` or `.TQ` outside `.RS`/`.RE`; its tag is
/// the next line, and the names are the bold parts of that line (`.B NAME`, the first
/// argument of `.BI`, every other argument of `.BR` from the first), first word of
/// each, with roff's `\-` read as `-`. Comment lines (`.\"`) are not part of the page.
struct ManPageOutline {
    /// Section title (as after `.SH`, quotes dropped) to the names of its entries' tags,
    /// in page order, repeats kept.
    private(set) var tags: [String: [String]] = [:]
    /// Section title to the words of its lines, macros and font changes left out:
    /// runs of letters, digits, `_` and `-`.
    private(set) var words: [String: [String]] = [:]
    /// Every word of the page outside comments, whatever the section.
    private(set) var allWords: [String] = []

    init(page: String) {
        var section = ""
        var nesting = 0
        var tagFollows = false
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            guard !line.hasPrefix(".\\\"") else { continue }
            let macro = line.hasPrefix(".") ? String(line.prefix { $0 != " " }) : ""
            let arguments = Self.arguments(line.dropFirst(macro.count))
            if tagFollows {
                tagFollows = false
                tags[section, default: []] += Self.boldNames(macro: macro, arguments)
            }
            switch macro {
            case ".SH":
                section = arguments.joined(separator: " ")
                tags[section, default: []] += []
            case ".RS": nesting += 1
            case ".RE": nesting -= 1
            case ".TP", ".TQ": tagFollows = nesting == 0
            default: break
            }
            let found = Self.words(of: macro.isEmpty ? Substring(line) : Substring(arguments.joined(separator: " ")))
            words[section, default: []] += found
            allWords += found
        }
    }

    /// The arguments of a macro line, roff's way: separated by spaces, a quoted one
    /// may hold spaces (`""` in it is one quote).
    static func arguments(_ text: Substring) -> [String] {
        var result: [String] = []
        var current = ""
        var quoted = false
        var started = false
        var characters = text[...]
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" {
                        current.append(characters.removeFirst())
                    } else {
                        quoted = false
                    }
                } else {
                    current.append(character)
                }
            } else if character == " " {
                if started { result.append(current) }
                current = ""
                started = false
            } else if character == "\"" && !started {
                quoted = true
                started = true
            } else {
                current.append(character)
                started = true
            }
        }
        if started { result.append(current) }
        return result
    }

    private static func boldNames(macro: String, _ arguments: [String]) -> [String] {
        let bold: [String]
        switch macro {
        case ".B": bold = [arguments.joined(separator: " ")]
        case ".BI": bold = Array(arguments.prefix(1))
        case ".BR": bold = arguments.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        default: bold = []
        }
        return bold.compactMap { words(of: Substring($0)).first }
    }

    /// The words of a piece of roff text: `\-` read as `-`, font changes (`\fB`,
    /// `\f(CW`, `\f[..]`) and the other escapes dropped.
    static func words(of text: Substring) -> [String] {
        var plain = ""
        var characters = text.replacing("\\-", with: "-")[...]
        while let character = characters.popFirst() {
            guard character == "\\" else {
                plain.append(character)
                continue
            }
            switch characters.popFirst() {
            case "f":
                switch characters.popFirst() {
                case "(": characters = characters.dropFirst(2)
                case "[": characters = characters.drop { $0 != "]" }.dropFirst()
                default: break
                }
            case "(": characters = characters.dropFirst(2)
            case "[": characters = characters.drop { $0 != "]" }.dropFirst()
            default: break
            }
            plain.append(" ")
        }
        return plain.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
            .map { String($0.trimmed(of: "-")) }.filter { !$0.isEmpty }
    }

    /// The repository's file at `relativePath`.
    static func read(_ relativePath: String) throws -> String {
        // Tests/UplinkLinuxTests/Documentation/ManPageOutline.swift -> repository root.
        let root = "/" + String(#filePath).split(separator: "/").dropLast(4).joined(separator: "/")
        return String(decoding: try SmallFile.readAll("\(root)/\(relativePath)", limit: 1 << 20), as: UTF8.self)
    }
}

private extension Substring {
    /// Without the given characters at either end.
    func trimmed(of set: String) -> Substring {
        var text = self
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return text
    }
}
