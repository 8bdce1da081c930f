import Testing
import UplinkCore
import UplinkLinux
import UplinkTestSupport

/// uplinkd-hooks(7) is held to the code that makes hook events: its EVENTS section has
/// one entry for each case of `HookEvent.Kind` and none other, its ENVIRONMENT section
/// names every variable a hook is given (`HookEvent.environment`, and PATH), and the
/// page names no `UPLINK_` variable the agent does not set.
@Suite("Hooks manual page")
struct HooksManPageTests {
    private static let page = "packaging/debian/uplinkd-hooks.7"

    /// The cases of `HookEvent.Kind` as its source declares them: the enum is not
    /// CaseIterable, and a list kept here by hand could miss a new case.
    static func eventKinds() throws -> [String] {
        let source = try ManPageOutline.read("Sources/UplinkCore/Hooks/HookEvent.swift")
        let lines = source.split(separator: "\n")
        guard let start = lines.firstIndex(where: { $0.contains("enum Kind") }) else { return [] }
        let indent = lines[start].prefix { $0 == " " }
        var kinds: [String] = []
        for line in lines[(start + 1)...] {
            if line == indent + "}" { break }
            let code = line.drop { $0 == " " }
            guard code.hasPrefix("case ") else { continue }
            for declaration in code.dropFirst(5).split(separator: ",") {
                let parts = declaration.split(separator: "=", maxSplits: 1)
                let raw = parts.count == 2 ? parts[1].filter { $0 != "\"" && $0 != " " } : parts[0].filter { $0 != " " }
                kinds.append(String(raw))
            }
        }
        return kinds
    }

    /// The names of every variable in a hook's environment, for events of each kind.
    static func variables(kinds: [String]) -> [String] {
        var names = ["PATH"]
        for kind in kinds.compactMap(HookEvent.Kind.init(rawValue:)) {
            let event = HookEvent(kind: kind, interface: "eth0", interfaceKind: .ethernet, verdict: .online,
                                  previousVerdict: .down, reason: .validated, portalURL: nil, primary: nil,
                                  previousPrimary: nil, wallSeconds: 0)
            for line in event.environment {
                let name = String(line.prefix { $0 != "=" })
                if !names.contains(name) { names.append(name) }
            }
        }
        return names
    }

    @Test func thePageHasEveryEventAndVariableOfTheCodeAndNoOther() throws {
        let kinds = try Self.eventKinds()
        #expect(kinds.count >= 7 && kinds.contains("verdict") && kinds.contains("outage"), "HookEvent.swift read wrong: \(kinds)")
        for kind in kinds {
            #expect(HookEvent.Kind(rawValue: kind) != nil, "'\(kind)' read from HookEvent.swift is no HookEvent.Kind")
        }
        let variables = Self.variables(kinds: kinds)
        #expect(variables.count > 40 && variables.contains("UPLINK_OUTAGE_SEQUENCE") && variables.contains("UPLINK_STANDBY"))
        let problems = HooksPageCheck(page: try ManPageOutline.read(Self.page)).problems(events: kinds, variables: variables)
        #expect(problems == [], "\(Self.page) and the code differ")
    }

    /// The comparison on a made-up page: an event missing, one the code does not
    /// have, one told twice, a variable missing from ENVIRONMENT, and a variable the
    /// agent does not set (named anywhere) are each named.
    @Test func eachKindOfDriftIsNamed() {
        let made = """
            .SH EVENTS
            .TP
            .B verdict
            .TP
            .BR verdict " (again)"
            .TP
            .B reboot
            .SH ENVIRONMENT
            .TP
            .BR UPLINK_EVENT ", " UPLINK_KIND
            The event, from \\fBUPLINK_\\fR and a name.
            PATH too.
            .SH NOTES
            .\\" UPLINK_IN_A_COMMENT is not part of the page.
            See UPLINK_VERDICT and UPLINK_WHATEVER.
            """
        let problems = HooksPageCheck(page: made).problems(events: ["verdict", "stop"],
                                                           variables: ["PATH", "UPLINK_EVENT", "UPLINK_KIND", "UPLINK_VERDICT"])
        #expect(problems == [
            "EVENTS has no entry for the event 'stop'",
            "EVENTS has 2 entries for 'verdict'",
            "EVENTS has an entry for 'reboot', which is no event of HookEvent.Kind",
            "ENVIRONMENT does not name UPLINK_VERDICT",
            "the page names UPLINK_WHATEVER, which the agent does not set",
        ])
    }
}

/// What uplinkd-hooks(7) must say: an entry in EVENTS per event kind, each variable
/// named in ENVIRONMENT, and no `UPLINK_` name (outside the bare prefix a rule of
/// naming uses) that the agent does not set.
struct HooksPageCheck {
    let outline: ManPageOutline

    init(page: String) {
        outline = ManPageOutline(page: page)
    }

    func problems(events: [String], variables: [String]) -> [String] {
        var problems: [String] = []
        let entries = outline.tags["EVENTS"] ?? []
        for event in events where !entries.contains(event) {
            problems.append("EVENTS has no entry for the event '\(event)'")
        }
        var counted: [String: Int] = [:]
        for entry in entries { counted[entry, default: 0] += 1 }
        for entry in entries where counted[entry] != nil {
            if !events.contains(entry) {
                problems.append("EVENTS has an entry for '\(entry)', which is no event of HookEvent.Kind")
            } else if counted[entry]! > 1 {
                problems.append("EVENTS has \(counted[entry]!) entries for '\(entry)'")
            }
            counted[entry] = nil
        }
        let environment = Set(outline.words["ENVIRONMENT"] ?? [])
        for variable in variables where !environment.contains(variable) {
            problems.append("ENVIRONMENT does not name \(variable)")
        }
        var reported: Set<String> = []
        for word in outline.allWords where word.hasPrefix("UPLINK_") && word != "UPLINK_" && !variables.contains(word) {
            if reported.insert(word).inserted { problems.append("the page names \(word), which the agent does not set") }
        }
        return problems
    }
}
