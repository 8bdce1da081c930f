/// How a backup waits for its turn (`standby`).
package enum Standby: String, Sendable, CaseIterable {
    /// Probed on the unmetered schedule (a light round every 10 s), metered or not.
    case hot
    /// Its class's schedule: the metered one for a metered uplink (the default).
    case warm
    /// No probe while another uplink is primary: verified the moment it is needed.
    case cold
}

/// Whether a cold backup's modem keeps its data bearer up while it waits
/// (`standby-bearer`).
package enum StandbyBearer: String, Sendable, CaseIterable {
    case connected
    /// Disconnected while another uplink is primary (no data session, nothing billed
    /// for keep-alives), connected again the moment it is needed.
    case disconnected
}

/// When a preferred uplink that came back takes the primary role back (`failback`).
package enum Failback: String, Sendable, CaseIterable {
    /// As soon as it is online (and verified).
    case immediate
    /// After it stayed online for `hold-down`.
    case delayed
    /// Not while the current primary stays online: fewer switches.
    case never
}

/// What a metered uplink costs and how it is used: its data plan, how it waits as a
/// backup, how closely it is watched while it serves as the primary. One part of the
/// layered probing settings (`ProbingSettings.metering`), so each can be set for every
/// uplink, per kind and per interface.
package struct MeteringSettings: Sendable, Equatable {
    /// `plan`: whether its traffic is counted, and against what limit.
    package var planLimit = PlanLimit.off
    /// The cycle, warnings and cap behaviour of its plan, kept apart from the limit so
    /// that `[kind wwan] plan-start = 12` holds for a plan an interface section sets.
    package var planShape = PlanSettings(limitBytes: nil)
    package var standby: Standby
    package var standbyBearer: StandbyBearer = .connected
    /// While it is the primary, it is checked at least this often, by liveness rounds
    /// between its light rounds (a metered uplink's own interval is far too long to
    /// notice a dead upstream while the LAN is idle); nil: its cadence applies.
    package var primaryIntervalMilliseconds: Int?

    /// Its data plan; nil: its traffic is not counted (`plan = off`).
    package var plan: PlanSettings? {
        var plan = planShape
        switch planLimit {
        case .off: return nil
        case .unlimited: plan.limitBytes = nil
        case .bytes(let bytes): plan.limitBytes = bytes
        }
        return plan
    }

    /// Metered uplinks wait warm and are checked every 90 s while primary (about 6.5 MB
    /// a month of liveness rounds); unmetered ones wait hot and keep their cadence.
    package static func defaults(metered: Bool) -> MeteringSettings {
        MeteringSettings(standby: metered ? .warm : .hot, primaryIntervalMilliseconds: metered ? 90_000 : nil)
    }
}

/// `plan`: not counted, counted without a limit, or counted against a limit.
package enum PlanLimit: Sendable, Equatable {
    case off
    case unlimited
    case bytes(Int)
}

/// What one configuration layer sets of `MeteringSettings`; nil leaves the layer below.
package struct MeteringOverrides: Sendable, Equatable {
    package var plan: PlanLimit?
    package var period: PlanPeriod?
    package var startDay: PlanStartDay?
    package var warnPercents: [Int]?
    package var atCap: AtCap?
    package var standby: Standby?
    package var standbyBearer: StandbyBearer?
    package var primaryInterval: Limit?

    package init() {}

    package func applied(to settings: MeteringSettings) -> MeteringSettings {
        var result = settings
        if let plan { result.planLimit = plan }
        if let period { result.planShape.period = period }
        if let startDay { result.planShape.start = startDay }
        if let warnPercents { result.planShape.warnPercents = warnPercents }
        if let atCap { result.planShape.atCap = atCap }
        if let standby { result.standby = standby }
        if let standbyBearer { result.standbyBearer = standbyBearer }
        if let primaryInterval { result.primaryIntervalMilliseconds = primaryInterval.value }
        return result
    }
}

/// `plan-start`: a day of the month, or a weekday; which one counts depends on
/// `plan-period`, checked once every layer is known.
package enum PlanStartDay: Sendable, Equatable {
    case dayOfMonth(Int)
    /// ISO: 1 Monday to 7 Sunday.
    case weekday(Int)

    package static let weekdayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
}

extension ConfigurationKeys {
    /// The metering keys: part of the probing keys, so they go in `[agent]` (every
    /// uplink), `[kind KIND]` and `[interface NAME]`.
    package static let metering = KeyTable<MeteringOverrides>(section: "probing", [
        ("plan", { (value: String, m: inout MeteringOverrides) throws(ValueError) in
            switch value {
            case "off": m.plan = .off
            case "unlimited": m.plan = .unlimited
            default: m.plan = .bytes(try ValueParser.dataSize(value, range: 1_000...1_000_000_000_000_000))
            }
        }),
        ("plan-period", { (value: String, m: inout MeteringOverrides) throws(ValueError) in
            let period: PlanPeriod = try ValueParser.choice(value)
            m.period = period
        }),
        ("plan-start", { (value: String, m: inout MeteringOverrides) throws(ValueError) in
            m.startDay = try ValueParser.planStartDay(value) }),
        ("plan-warn", { (value: String, m: inout MeteringOverrides) throws(ValueError) in
            m.warnPercents = try ValueParser.warnPercents(value) }),
        ("at-cap", { (value: String, m: inout MeteringOverrides) throws(ValueError) in
            let atCap: AtCap = try ValueParser.choice(value)
            m.atCap = atCap
        }),
        ("standby", { (value: String, m: inout MeteringOverrides) throws(ValueError) in
            let standby: Standby = try ValueParser.choice(value)
            m.standby = standby
        }),
        ("standby-bearer", { (value: String, m: inout MeteringOverrides) throws(ValueError) in
            let bearer: StandbyBearer = try ValueParser.choice(value)
            m.standbyBearer = bearer
        }),
        ("primary-interval", { (value: String, m: inout MeteringOverrides) throws(ValueError) in
            m.primaryInterval = value == "off" ? .off : .value(try ValueParser.duration(value, range: 5_000...86_400_000)) }),
    ])

    /// The metering keys' names, for the `[agent]` table's list of probing keys.
    static var meteringKeyNames: [String] { metering.keys }
}

extension ValueParser {
    /// A data volume as carriers sell it: `5GB` (decimal: kB, MB, GB, TB are powers of
    /// 1000), `5GiB` (binary: KiB, MiB, GiB, TiB), plain bytes, a fraction allowed
    /// (`1.5GB`).
    package static func dataSize(_ text: String, range: ClosedRange<Int>) throws(ValueError) -> Int {
        let units: [(String, Int)] = [
            ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40),
            ("kB", 1_000), ("KB", 1_000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("TB", 1_000_000_000_000), ("B", 1),
        ]
        var number = text
        var scale = 1
        if let (suffix, multiplier) = units.first(where: { text.hasSuffix($0.0) }) {
            number = String(text.dropLast(suffix.count)).trimmingWhitespace
            scale = multiplier
        }
        let failure = ValueError("expected a data volume from \(range.lowerBound) bytes to \(range.upperBound / 1_000_000_000_000) TB such as 5GB, 500MB or 2GiB, got '\(text.printableEscaped)'")
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = Int(parts[0]), whole >= 0, parts[0].allSatisfy(\.isASCIIDigit) else {
            throw failure
        }
        var bytes = whole.multipliedReportingOverflow(by: scale)
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= 6, fraction.allSatisfy(\.isASCIIDigit), let digits = Int(fraction) else {
                throw failure
            }
            var divisor = 1
            for _ in 0..<fraction.count { divisor *= 10 }
            let (part, overflow) = digits.multipliedReportingOverflow(by: scale)
            guard !overflow, !bytes.overflow else { throw failure }
            bytes = bytes.partialValue.addingReportingOverflow(part / divisor)
        }
        guard !bytes.overflow, range.contains(bytes.partialValue) else { throw failure }
        return bytes.partialValue
    }

    /// `plan-start`: a day of the month (1 to 31) or a weekday name (`monday`, or its
    /// first three letters).
    package static func planStartDay(_ text: String) throws(ValueError) -> PlanStartDay {
        if let day = Int(text), (1...31).contains(day), text.allSatisfy(\.isASCIIDigit) { return .dayOfMonth(day) }
        let word = text.lowercased()
        if word.count >= 3, let index = PlanStartDay.weekdayNames.firstIndex(where: { $0 == word || $0.prefix(3) == word }) {
            return .weekday(index + 1)
        }
        throw ValueError("expected a day of the month from 1 to 31 (plan-period = month) or a weekday such as monday (plan-period = week); got '\(text.printableEscaped)'")
    }

    /// `plan-warn`: percentages below 100, or `none`.
    package static func warnPercents(_ text: String) throws(ValueError) -> [Int] {
        if text == "none" { return [] }
        var percents: [Int] = []
        for word in list(text) {
            guard let percent = Int(word), (1...99).contains(percent), word.allSatisfy(\.isASCIIDigit) else {
                throw ValueError("expected percentages from 1 to 99 such as 75, 95 (or none); got '\(word.printableEscaped)'")
            }
            percents.append(percent)
        }
        guard !percents.isEmpty else { throw ValueError("expected percentages such as 75, 95, or none") }
        return Array(Set(percents)).sorted()
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// Where the agent keeps its data plans' counts across restarts and reboots (`[agent]
/// plan-file`, `plan-save-interval`).
package struct PlanFileSettings: Sendable, Equatable {
    /// On persistent storage (systemd's StateDirectory): the state file's tmpfs is
    /// emptied at every boot.
    package var path = "/var/lib/uplinkd/plans"
    /// The counts are written at most this often (and at a stop, a new cycle, a mark
    /// crossed or a reset by hand): what a power cut can lose, against flash wear.
    package var saveIntervalMilliseconds = 300_000

    package init() {}
}

extension ConfigurationKeys {
    /// `[agent]` keys about metered uplinks for the whole agent.
    static let agentMetering = KeyTable<Configuration>(section: "agent", [
        ("failback", { (value: String, c: inout Configuration) throws(ValueError) in
            let failback: Failback = try ValueParser.choice(value)
            c.agent.failback = failback
        }),
        ("plan-file", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.plans.path = try ValueParser.absoluteFilePath(value) }),
        ("plan-save-interval", { (value: String, c: inout Configuration) throws(ValueError) in
            c.agent.plans.saveIntervalMilliseconds = try ValueParser.duration(value, range: 10_000...3_600_000) }),
    ])
}

extension Configuration {
    /// The built-in defaults an uplink's layers go over: its class's schedule, except
    /// that a metered uplink kept `standby = hot` is probed on the unmetered one.
    func classDefaults(for name: InterfaceName, kind: InterfaceKind, metered: Bool) -> ProbingSettings {
        let layers = [commandLine.metering, interfaces[name]?.probing.metering, kinds[kind]?.metering, probing.metering]
        let standby = layers.lazy.compactMap { $0?.standby }.first
        var settings = ProbingSettings.defaults(metered: metered && standby != .hot)
        settings.metering = .defaults(metered: metered)
        return settings
    }
}

extension ConfigurationParser {
    /// Every plan the layers can make starts on a day of its period's kind: a day of the
    /// month for monthly cycles, a weekday for weekly ones.
    func checkPlanStarts(_ configuration: Configuration,
                         _ error: (String, [String], String) -> ConfigurationError) throws(ConfigurationError) {
        let base = MeteringSettings.defaults(metered: true)
        let agent = configuration.probing.metering
        var layered: [(sections: [String], settings: MeteringSettings)] = [(["agent"], agent.applied(to: base))]
        let kinds = configuration.kinds.keys.sorted { $0.rawValue < $1.rawValue }
        for kind in kinds {
            let settings = configuration.kinds[kind]!.metering.applied(to: agent.applied(to: base))
            layered.append((["kind \(kind.rawValue)", "agent"], settings))
        }
        for name in configuration.interfaces.keys.sorted() {
            let own = configuration.interfaces[name]!.probing.metering
            let under = configuration.interfaces[name]?.kind.map { [$0] } ?? kinds
            for kind in under {
                let kindLayer = configuration.kinds[kind]?.metering ?? MeteringOverrides()
                layered.append((["interface \(name)", "kind \(kind.rawValue)", "agent"],
                                own.applied(to: kindLayer.applied(to: agent.applied(to: base)))))
            }
            layered.append((["interface \(name)", "agent"], own.applied(to: agent.applied(to: base))))
        }
        for (sections, settings) in layered {
            let shape = settings.planShape
            switch (shape.period, shape.start) {
            case (.month, .weekday?):
                throw error("plan-start", sections, "plan-start is a weekday but plan-period is month: give a day of the month from 1 to 31")
            case (.week, .dayOfMonth?):
                throw error("plan-start", sections, "plan-start is a day of the month but plan-period is week: give a weekday such as monday")
            default:
                continue
            }
        }
    }
}
