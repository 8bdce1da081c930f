import UplinkCore

/// What `uplinkd check` was asked to do.
struct CheckArguments {
    var interfaces: [InterfaceName] = []
    var json = false
    var helpRequested = false
    var verbose = false
    var configPath: String?
    var timeoutMilliseconds: Int?
    var thresholdPercent: Int?
    /// Probes given with --url; when any, they replace the configured probe set.
    var probes: [ProbeSpec] = []
}

extension CheckArguments {
    static func parse(_ arguments: ArraySlice<String>) throws(UsageError) -> CheckArguments {
        var result = CheckArguments()
        var reader = ArgumentReader(arguments)
        var draft: ProbeDraft?
        while let (option, inline) = reader.next() {
            switch option {
            case "--help", "-h":
                result.helpRequested = true
            case "--json":
                result.json = true
            case "--verbose", "-v":
                result.verbose = true
            case "--config":
                result.configPath = try reader.value(for: option, inline: inline)
            case "--timeout":
                let text = try reader.value(for: option, inline: inline)
                guard let milliseconds = parseSeconds(text) else {
                    throw UsageError("--timeout: expected seconds between 0.1 and 60 (e.g. 5 or 2.5), got '\(text.printableEscaped)'")
                }
                result.timeoutMilliseconds = milliseconds
            case "--threshold":
                let text = try reader.value(for: option, inline: inline)
                do {
                    result.thresholdPercent = try ValueParser.percent(text)
                } catch {
                    throw UsageError("--threshold: \(error.message)")
                }
            case "--url", "--expect-status", "--expect-body", "--expect-contains", "--expect-regex", "--validator":
                try result.readProbeOption(option, inline: inline, from: &reader, draft: &draft)
            default:
                if option.hasPrefix("-") { throw UsageError("unknown option '\(option.printableEscaped)' for check") }
                if let problem = InterfaceName.problem(with: option) { throw UsageError(problem) }
                result.interfaces.append(InterfaceName(option)!)
            }
        }
        try result.finishProbe(&draft)
        if result.helpRequested { return result }
        if result.interfaces.isEmpty { throw UsageError("check needs at least one interface name") }
        return result
    }

    /// A probe is spread over several options: `--url` starts one, the `--expect-*`
    /// and `--validator` after it shape it, and it is built when the next `--url` or
    /// the end comes.
    private mutating func readProbeOption(_ option: String, inline: String?, from reader: inout ArgumentReader,
                                          draft: inout ProbeDraft?) throws(UsageError) {
        if option == "--url" {
            try finishProbe(&draft)
            var next = ProbeDraft()
            try Self.apply(&next, key: "url", option: option, value: try reader.value(for: option, inline: inline))
            draft = next
        } else {
            let value = try reader.value(for: option, inline: inline)
            guard var current = draft else { throw UsageError("\(option) must follow the --url it applies to") }
            try Self.apply(&current, key: String(option.dropFirst(2)), option: option, value: value)
            draft = current
        }
    }

    /// Only a finished probe is checked as a whole (a URL alone may not yet say what
    /// to expect), and it is named by its place on the command line.
    private mutating func finishProbe(_ draft: inout ProbeDraft?) throws(UsageError) {
        guard let current = draft else { return }
        do {
            probes.append(try current.build(name: "url\(probes.count + 1)"))
        } catch {
            throw UsageError("--url: \(error.message)")
        }
        draft = nil
    }

    private static func apply(_ draft: inout ProbeDraft, key: String, option: String, value: String) throws(UsageError) {
        do {
            try draft.apply(key, value)
        } catch {
            throw UsageError("\(option): \(error.message)")
        }
    }

    /// "5", "2.5", "500ms", "2m" or "1h" into milliseconds within `range` (check's
    /// probe time limit by default: 100 ms to 60 s; wait-online passes its own).
    static func parseSeconds(_ text: String, range: ClosedRange<Int> = 100...60_000) -> Int? {
        if text.hasSuffix("ms") || text.hasSuffix("s") || text.hasSuffix("m") || text.hasSuffix("h") {
            return try? ValueParser.duration(text, range: range)
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = Int(parts[0]), whole >= 0, whole <= range.upperBound / 1_000 else { return nil }
        var milliseconds = whole * 1_000
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= 3, let value = Int(fraction), value >= 0 else { return nil }
            milliseconds += value * [100, 10, 1][fraction.count - 1]
        }
        return range.contains(milliseconds) ? milliseconds : nil
    }
}
