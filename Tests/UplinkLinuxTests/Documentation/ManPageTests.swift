import Testing
import UplinkCore
import UplinkLinux

/// The manual pages are checked against the code they describe, so they cannot drift:
/// uplinkd.conf(5) documents exactly the keys the parser's tables accept, section by
/// section, and uplinkd(8) names every command `main.swift` dispatches.
@Suite("Manual pages")
struct ManPageTests {
    // Tests/UplinkLinuxTests/ManPageTests.swift -> repository root.
    private static let root = "/" + String(#filePath).split(separator: "/").dropLast(4).joined(separator: "/")

    private static func read(_ relativePath: String) throws -> String {
        String(decoding: try SmallFile.readAll("\(root)/\(relativePath)", limit: 1 << 20), as: UTF8.self)
    }

    private static func configurationPage() throws -> ManPageKeys {
        ManPageKeys(page: try read("packaging/debian/uplinkd.conf.5"))
    }

    @Test func everyKeyTheParserAcceptsIsDocumented() throws {
        let page = try Self.configurationPage()
        for (section, keys) in ConfigurationKeys.sections {
            let documented = page.keys[section] ?? []
            #expect(page.keys[section] != nil, "uplinkd.conf(5) has no '.SS [\(section)]' heading")
            for key in keys where !documented.contains(key) {
                Issue.record("uplinkd.conf(5) does not document key '\(key)' of [\(section)]")
            }
        }
    }

    @Test func everyDocumentedKeyIsOneTheParserAccepts() throws {
        let page = try Self.configurationPage()
        let accepted = Dictionary(uniqueKeysWithValues: ConfigurationKeys.sections.map { ($0.section, $0.keys) })
        for (section, keys) in page.keys.sorted(by: { $0.key < $1.key }) {
            guard let known = accepted[section] else {
                Issue.record("uplinkd.conf(5) documents section [\(section)], which the parser does not know")
                continue
            }
            for key in keys where !known.contains(key) {
                Issue.record("uplinkd.conf(5) documents key '\(key)' in [\(section)], which the parser does not accept there")
            }
            var seen: Set<String> = []
            for key in keys where !seen.insert(key).inserted {
                Issue.record("uplinkd.conf(5) documents key '\(key)' of [\(section)] twice")
            }
        }
        #expect(page.problems == [])
    }

    /// The index is a hand-made list of the parser's tables: a section added to the
    /// parser (its header switch and its "unknown section" message) but not to the
    /// index would escape the two tests above.
    @Test func theIndexHasEverySectionTheParserNames() throws {
        var named: [String] = []
        do throws(ConfigurationError) {
            _ = try ConfigurationParser(fileName: "t.conf").parse("[no-such-section]\n")
            Issue.record("an unknown section was accepted")
        } catch {
            // "unknown section [no-such-section]; expected [check], [agent], ... or [interface NAME]"
            let expected = error.message.split(separator: ";", maxSplits: 1).last ?? ""
            named = expected.split(separator: "[").dropFirst().compactMap { $0.split(separator: "]").first.map(String.init) }
        }
        #expect(!named.isEmpty)
        #expect(Set(named) == Set(ConfigurationKeys.sections.map(\.section)))
    }

    /// Each indexed key, written under its section header, reaches that section's table
    /// in the parser: whatever the value's fate, the key is never "unknown".
    @Test func theParserAcceptsEveryIndexedKeyInItsSection() {
        for (section, keys) in ConfigurationKeys.sections {
            let header = section.replacing("NAME", with: "eth0").replacing("KIND", with: "wwan")
            for key in keys {
                do throws(ConfigurationError) {
                    _ = try ConfigurationParser(fileName: "t.conf").parse("[\(header)]\n\(key) = \u{1}\n")
                } catch {
                    #expect(!error.message.hasPrefix("unknown key") && !error.message.hasPrefix("unknown section"), "[\(header)] \(key): \(error.message)")
                }
            }
        }
    }

    /// uplinkd(8)'s SYNOPSIS, one block per `.B uplinkd COMMAND` line (up to the next
    /// one), with roff's `\-` read as `-`.
    private static func synopses() throws -> [(command: String, text: String)] {
        var blocks: [(command: String, text: String)] = []
        var inSynopsis = false
        for line in try read("packaging/debian/uplinkd.8").replacing("\\-", with: "-").split(separator: "\n") {
            if line.hasPrefix(".SH") {
                inSynopsis = line == ".SH SYNOPSIS"
            } else if inSynopsis && line.hasPrefix(".B uplinkd ") {
                blocks.append((String(line.dropFirst(11)), ""))
            } else if inSynopsis && !blocks.isEmpty {
                blocks[blocks.count - 1].text += " " + line
            }
        }
        return blocks
    }

    /// The first quoted label of each `case` line of a Swift source, and all its
    /// quoted labels.
    private static func caseLabels(_ source: String) -> [(first: String, all: [String])] {
        source.split(separator: "\n").compactMap { line in
            let code = line.trimmingPrefix(while: { $0 == " " })
            guard code.hasPrefix("case \""), let colon = code.firstIndex(of: ":") else { return nil }
            let labels = code[..<colon].split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            return labels.first.map { ($0, labels) }
        }
    }

    /// The names of `main.swift`'s dispatch table (its `"NAME": SomeCommand.run,`
    /// lines), then the first label of each of its `case`s.
    private static func dispatchedCommands(_ source: String) -> [String] {
        let tableNames = source.split(separator: "\n").compactMap { line -> String? in
            let code = line.trimmingPrefix(while: { $0 == " " })
            guard code.hasPrefix("\""), code.hasSuffix(".run,") else { return nil }
            return String(code.dropFirst().prefix { $0 != "\"" })
        }
        return tableNames + caseLabels(source).map(\.first)
    }

    /// Every command of `main.swift`'s dispatch (each name of its table, the first
    /// label of each `case`) has a synopsis line `.B uplinkd COMMAND` in uplinkd(8).
    @Test func uplinkd8HasASynopsisForEveryCommand() throws {
        let commands = Self.dispatchedCommands(try Self.read("Sources/uplinkd/main.swift"))
        #expect(commands.contains("check") && commands.contains("--help"))
        let synopses = try Self.synopses()
        for command in commands where !synopses.contains(where: { $0.command == command || $0.command.hasPrefix("\(command) ") }) {
            Issue.record("uplinkd(8) has no synopsis line '.B uplinkd \(command)' in SYNOPSIS for a command main.swift dispatches")
        }
    }

    /// Every `--option` a command reads (the labels of the `case`s in the file that
    /// calls `readOptions(..., for: "COMMAND")`, or CheckArguments.swift for check) is
    /// in that command's synopsis in uplinkd(8).
    @Test func uplinkd8ListsEveryOptionOfEveryCommand() throws {
        let synopses = try Self.synopses()
        var commandsSeen: [String] = []
        var optionsSeen: Set<String> = []
        for file in try SmallFile.directoryEntries("\(Self.root)/Sources/uplinkd").sorted() where file.hasSuffix(".swift") {
            let source = try Self.read("Sources/uplinkd/\(file)")
            let command: String
            if file == "CheckArguments.swift" {
                command = "check"
            } else if let marker = source.firstRange(of: "readOptions(") {
                guard let named = source[marker.upperBound...].firstRange(of: "for: \"") else { continue }
                command = String(source[named.upperBound...].prefix(while: { $0 != "\"" }))
            } else {
                continue
            }
            commandsSeen.append(command)
            let options = Self.caseLabels(source).flatMap(\.all).filter { $0.hasPrefix("--") && $0 != "--help" }
            optionsSeen.formUnion(options)
            guard let synopsis = synopses.first(where: { $0.command == command }) else {
                Issue.record("uplinkd(8) has no synopsis line '.B uplinkd \(command)' (options read in \(file))")
                continue
            }
            let words = synopsis.text.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "-") }).map(String.init)
            for option in options where !words.contains(option) {
                Issue.record("uplinkd(8) does not list option \(option) in the synopsis of '\(command)' (read in \(file))")
            }
        }
        #expect(Set(commandsSeen).isSuperset(of: ["check", "links", "run", "status", "config check"]))
        #expect(optionsSeen.isSuperset(of: ["--threshold", "--expect-regex", "--watch", "--hooks-dir", "--state"]))
    }

    @Test func keyEntriesAreReadFromTagLinesUnderSectionHeadings() {
        let page = ManPageKeys(page: """
            .SH VALUES
            .TP
            .I DURATION
            .SH KEYS
            .SS [check]
            .TP
            .BI "time\\-out = " DURATION
            text
            .RS
            .TP
            .B nested
            .RE
            .TP
            .B a
            .TQ
            .B b
            .SS Other
            .TP
            .B outside
            .SS [probe NAME]
            .TP
            .I wrong
            """)
        #expect(page.keys == ["check": ["time-out", "a", "b"], "probe NAME": []])
        #expect(page.problems == ["line 22: the tag of an entry under [probe NAME] is not '.B key' or '.BI key ...'"])
    }
}

/// The keys a configuration manual page documents, read in one well-defined way: under
/// a heading `.SS [SECTION]` (until the next `.SS` or `.SH`), the line after each `.TP`
/// or `.TQ` is an entry's tag, `.B key` or `.BI "key = " VALUE`, and its first word,
/// with roff's `\-` read as `-`, is the key. Entries inside `.RS`/`.RE` (examples, lists
/// of values) are not keys.
struct ManPageKeys {
    /// Section (as in the heading, without brackets) to its keys, in page order.
    private(set) var keys: [String: [String]] = [:]
    /// Entries under a section heading whose tag is not a key.
    private(set) var problems: [String] = []

    init(page: String) {
        var section: String?
        var nesting = 0
        var tagFollows = false
        for (index, line) in page.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let macro = line.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
            if tagFollows, let current = section {
                tagFollows = false
                if (macro == ".B" || macro == ".BI"), let key = Self.firstWord(line.dropFirst(macro.count)) {
                    keys[current, default: []].append(key)
                } else {
                    problems.append("line \(index + 1): the tag of an entry under [\(current)] is not '.B key' or '.BI key ...'")
                }
                continue
            }
            switch macro {
            case ".SH":
                section = nil
            case ".SS":
                let title = line.dropFirst(4).trimmingPrefix(while: { $0 == " " })
                section = title.hasPrefix("[") && title.hasSuffix("]") ? String(title.dropFirst().dropLast()) : nil
                if let section { keys[section, default: []] += [] }
            case ".RS": nesting += 1
            case ".RE": nesting -= 1
            case ".TP", ".TQ": tagFollows = section != nil && nesting == 0
            default: break
            }
        }
    }

    /// The first word of a macro's arguments, quoted or not, up to a space or '='.
    private static func firstWord(_ arguments: Substring) -> String? {
        var text = arguments.trimmingPrefix(while: { $0 == " " })
        if text.hasPrefix("\"") { text = text.dropFirst() }
        let word = text.prefix(while: { $0 != " " && $0 != "=" && $0 != "\"" }).replacing("\\-", with: "-")
        return word.isEmpty ? nil : String(word)
    }
}
