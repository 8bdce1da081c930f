/// One uplink as recorded in the state file.
public struct UplinkStatus: Sendable, Equatable {
    public var interface: String
    public var kind: InterfaceKind
    public var verdict: Verdict
    public var reason: String
    /// Wall-clock seconds since the epoch when the verdict was reached.
    public var sinceWallSeconds: Int
    public var ipv4: Verdict?
    public var ipv6: Verdict?
    public var bytesToday: Int
    public var budgetBytes: Int?
    public var budgetExhausted: Bool
    public var portalURL: String?
    public var ipv4Reason: String?
    public var ipv6Reason: String?
    /// Where the uplink's DNS servers came from in its last round (nil: none found, or
    /// no round needed a name).
    public var dnsSource: DNSSource?

    public init(interface: String, kind: InterfaceKind, verdict: Verdict, reason: String, sinceWallSeconds: Int,
                ipv4: Verdict? = nil, ipv6: Verdict? = nil, bytesToday: Int = 0, budgetBytes: Int? = nil,
                budgetExhausted: Bool = false, portalURL: String? = nil, ipv4Reason: String? = nil,
                ipv6Reason: String? = nil, dnsSource: DNSSource? = nil) {
        self.ipv4Reason = ipv4Reason
        self.ipv6Reason = ipv6Reason
        self.dnsSource = dnsSource
        self.interface = interface
        self.kind = kind
        self.verdict = verdict
        self.reason = reason
        self.sinceWallSeconds = sinceWallSeconds
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.bytesToday = bytesToday
        self.budgetBytes = budgetBytes
        self.budgetExhausted = budgetExhausted
        self.portalURL = portalURL
    }
}

/// The agent's published state: what `uplinkd status` and other services read.
public struct AgentState: Sendable, Equatable {
    public var primary: String?
    public var uplinks: [UplinkStatus]
    /// Wall-clock seconds when the state was written.
    public var writtenWallSeconds: Int
    /// The agent's process id, so readers can tell whether it still runs.
    public var pid: Int
    /// Whether the agent stopped (the final state written on TERM/INT).
    public var stopped: Bool

    public init(primary: String?, uplinks: [UplinkStatus], writtenWallSeconds: Int, pid: Int, stopped: Bool = false) {
        self.primary = primary
        self.uplinks = uplinks
        self.writtenWallSeconds = writtenWallSeconds
        self.pid = pid
        self.stopped = stopped
    }

    /// Equality of content, ignoring when and by whom it was written: the file is
    /// replaced only when this changes.
    public func sameContent(as other: AgentState) -> Bool {
        primary == other.primary && uplinks == other.uplinks && stopped == other.stopped
    }

    public var json: JSONValue {
        .object([
            ("primary", .optional(primary)),
            ("written", .int(writtenWallSeconds)),
            ("pid", .int(pid)),
            ("stopped", .bool(stopped)),
            ("uplinks", .array(uplinks.map { uplink in
                .object([
                    ("interface", .string(uplink.interface)),
                    ("kind", .string(uplink.kind.rawValue)),
                    ("verdict", .string(uplink.verdict.rawValue)),
                    ("reason", .string(uplink.reason)),
                    ("since", .int(uplink.sinceWallSeconds)),
                    ("portal_url", .optional(uplink.portalURL)),
                    ("families", .object([
                        ("ipv4", AgentState.familyJSON(uplink.ipv4, uplink.ipv4Reason)),
                        ("ipv6", AgentState.familyJSON(uplink.ipv6, uplink.ipv6Reason)),
                    ])),
                    ("dns_source", .optional(uplink.dnsSource?.rawValue)),
                    ("dns_per_uplink", .bool(uplink.dnsSource?.isPerUplink ?? false)),
                    ("bytes_today", .int(uplink.bytesToday)),
                    ("budget_bytes", uplink.budgetBytes.map(JSONValue.int) ?? .null),
                    ("budget_exhausted", .bool(uplink.budgetExhausted)),
                ])
            })),
        ])
    }
}

extension AgentState {
    static func familyJSON(_ verdict: Verdict?, _ reason: String?) -> JSONValue {
        guard let verdict else { return .null }
        return .object([("verdict", .string(verdict.rawValue)), ("reason", .optional(reason))])
    }
}

/// The state file format (version 1): a few header lines, then one line per uplink,
/// whitespace-separated fields with "-" for none, so POSIX sh and awk can read it:
///
///     # uplinkd state, format 1 (see README, "State file")
///     # uplink NAME KIND VERDICT REASON SINCE IPV4 IPV6 BYTES-TODAY BUDGET EXHAUSTED PORTAL-URL IPV4-REASON IPV6-REASON DNS-SOURCE
///     format 1
///     written 1763733436
///     pid 4242
///     state running
///     primary eth0
///     uplink eth0 ethernet online validated 1763733400 online - 2345 - no - validated - dhclient
///
/// Readers must ignore lines they do not know; new fields are only ever appended.
public enum StateFileFormat {
    public static let version = 1
    public static let columns = "uplink NAME KIND VERDICT REASON SINCE IPV4 IPV6 BYTES-TODAY BUDGET EXHAUSTED PORTAL-URL IPV4-REASON IPV6-REASON DNS-SOURCE"

    public static func encode(_ state: AgentState) -> String {
        var lines = [
            "# uplinkd state, format \(version) (see README, \"State file\")",
            "# \(columns)",
            "format \(version)",
            "written \(state.writtenWallSeconds)",
            "pid \(state.pid)",
            "state \(state.stopped ? "stopped" : "running")",
            "primary \(state.primary ?? "-")",
        ]
        for uplink in state.uplinks {
            let fields: [String] = [
                "uplink", uplink.interface, uplink.kind.rawValue, uplink.verdict.rawValue, token(uplink.reason),
                String(uplink.sinceWallSeconds), uplink.ipv4?.rawValue ?? "-", uplink.ipv6?.rawValue ?? "-",
                String(uplink.bytesToday), uplink.budgetBytes.map(String.init) ?? "-",
                uplink.budgetExhausted ? "yes" : "no", uplink.portalURL.map(urlToken) ?? "-",
                uplink.ipv4Reason.map(token) ?? "-", uplink.ipv6Reason.map(token) ?? "-",
                uplink.dnsSource?.rawValue ?? "-",
            ]
            lines.append(fields.joined(separator: " "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    public struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let message: String
        public var description: String { "line \(line): \(message)" }
    }

    public static func decode(_ text: String) throws(DecodeError) -> AgentState {
        var state = AgentState(primary: nil, uplinks: [], writtenWallSeconds: 0, pid: 0)
        var sawFormat = false
        var lineNumber = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.hasPrefix("#") || line.isEmpty { continue }
            let fields = line.split(separator: " ").map(String.init)
            guard let first = fields.first else { continue }
            switch first {
            case "format":
                guard fields.count >= 2, Int(fields[1]) == version else {
                    throw DecodeError(line: lineNumber, message: "unsupported format '\(fields.dropFirst().joined(separator: " "))'")
                }
                sawFormat = true
            case "written":
                state.writtenWallSeconds = try timestamp(fields, line: lineNumber)
            case "pid":
                guard fields.count > 1, let pid = Int(fields[1]), (1...Int(Int32.max)).contains(pid) else {
                    throw DecodeError(line: lineNumber, message: "malformed pid")
                }
                state.pid = pid
            case "state":
                state.stopped = fields.count > 1 && fields[1] == "stopped"
            case "primary":
                state.primary = fields.count > 1 && fields[1] != "-" ? fields[1] : nil
            case "uplink":
                guard fields.count >= 12,
                      let kind = InterfaceKind(rawValue: fields[2]), let verdict = Verdict(rawValue: fields[3]),
                      let since = Int(fields[5]), validTimes.contains(since),
                      let bytes = Int(fields[8]), bytes >= 0 else {
                    throw DecodeError(line: lineNumber, message: "malformed uplink line")
                }
                state.uplinks.append(UplinkStatus(
                    interface: fields[1], kind: kind, verdict: verdict, reason: fields[4], sinceWallSeconds: since,
                    ipv4: Verdict(rawValue: fields[6]), ipv6: Verdict(rawValue: fields[7]), bytesToday: bytes,
                    budgetBytes: Int(fields[9]), budgetExhausted: fields[10] == "yes",
                    portalURL: fields[11] == "-" ? nil : fields[11],
                    // Columns 13 to 15 came later: a file without them still reads.
                    ipv4Reason: fields.count > 12 && fields[12] != "-" ? fields[12] : nil,
                    ipv6Reason: fields.count > 13 && fields[13] != "-" ? fields[13] : nil,
                    dnsSource: fields.count > 14 ? DNSSource(rawValue: fields[14]) : nil))
            default:
                continue
            }
        }
        guard sawFormat else { throw DecodeError(line: 0, message: "no 'format' line: not an uplinkd state file") }
        return state
    }

    /// Seconds since the epoch that make sense (readers subtract them from now).
    static let validTimes = 0...(Int(Int32.max) * 64)

    static func timestamp(_ fields: [String], line: Int) throws(DecodeError) -> Int {
        guard fields.count > 1, let value = Int(fields[1]), validTimes.contains(value) else {
            throw DecodeError(line: line, message: "malformed time")
        }
        return value
    }

    /// Reasons are our own tokens; anything else is made a single safe token.
    static func token(_ text: String) -> String {
        let cleaned = String(text.unicodeScalars.map { $0.value > 0x20 && $0.value < 0x7f ? Character($0) : "_" })
        return cleaned.isEmpty ? "-" : cleaned
    }

    /// A portal URL comes from the network: percent-encoded so it stays one field.
    static func urlToken(_ url: String) -> String {
        let safe = PortalHints.safeURL(url)
        return safe.isEmpty ? "-" : safe
    }
}
