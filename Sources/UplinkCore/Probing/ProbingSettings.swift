/// How one uplink is probed and judged once every layer of the configuration is
/// applied: built-in defaults for its class (metered or not), then `[agent]`/`[check]`,
/// then `[kind KIND]`, then `[interface NAME]`. One global setting cannot watch an
/// unmetered primary closely and a metered backup cheaply; these can.
public struct ProbingSettings: Sendable, Equatable {
    /// Between rounds while the uplink is stable (light rounds while online).
    public var intervalMilliseconds: Int
    /// First interval while suspect; doubles up to `intervalMilliseconds`.
    public var suspectIntervalMilliseconds: Int
    /// Ceiling of one probe's HTTP exchange; rounds on an online uplink use less (the
    /// uplink's measured round-trip time decides, see `RoundTripEstimator`).
    public var timeoutMilliseconds: Int
    /// The probes to use, by name; nil: the whole probe set.
    public var probeNames: [String]?
    /// Share of a full round's probes that must validate for `online`.
    public var successThresholdPercent: Int
    /// Consecutive failed full rounds before an `online` uplink is given up. A full
    /// round runs only on doubt (a failed light probe, a link event, a passive alarm),
    /// so one failed full round is already the second piece of evidence.
    public var failuresToLeaveOnline: Int
    /// Consecutive validated rounds before a non-online uplink is `online` again.
    public var successesToReturnOnline: Int
    /// Daily probe byte budget; nil: none.
    public var dailyBudgetBytes: Int?
    /// Probe while online (false: only on link events and passive alarms).
    public var probeWhenOnline: Bool
    /// Passive stall detection: packets leaving with nothing coming back for this long
    /// make the uplink suspect. Nil: off.
    public var stallWindowMilliseconds: Int?
    /// Between light rounds of an online uplink, a bare TCP handshake this often
    /// (`RoundPurpose.liveness`). Nil: off.
    public var livenessIntervalMilliseconds: Int?
    /// The modem recovery ladder of a cellular uplink.
    public var recovery = RecoverySettings()
    /// Its data plan, how it waits as a backup, how it is watched as the primary.
    public var metering = MeteringSettings.defaults(metered: false)

    /// The built-in defaults of a class. Unmetered (ethernet, most Wi-Fi): a light
    /// round (one HTTP exchange, about 950 bytes) every 30 s and a bare handshake
    /// (224 bytes) every 4 s between them, about 290 KB an hour idle (210 MB a month;
    /// answered LAN traffic skips them), so an idle dead upstream is found within
    /// seconds. Metered (cellular, phone hotspots): one light round every 20 min,
    /// about 1.4 KiB each with its DNS lookup, about 3 MB a month.
    public static func defaults(metered: Bool) -> ProbingSettings {
        ProbingSettings(
            intervalMilliseconds: metered ? 1_200_000 : 30_000,
            suspectIntervalMilliseconds: metered ? 1_000 : 500,
            timeoutMilliseconds: 5_000, probeNames: nil, successThresholdPercent: 50,
            failuresToLeaveOnline: 1, successesToReturnOnline: 2, dailyBudgetBytes: nil,
            probeWhenOnline: true, stallWindowMilliseconds: 1_500, livenessIntervalMilliseconds: metered ? nil : 4_000)
    }

    public init(intervalMilliseconds: Int, suspectIntervalMilliseconds: Int, timeoutMilliseconds: Int,
                probeNames: [String]?, successThresholdPercent: Int, failuresToLeaveOnline: Int,
                successesToReturnOnline: Int, dailyBudgetBytes: Int?, probeWhenOnline: Bool,
                stallWindowMilliseconds: Int?, livenessIntervalMilliseconds: Int? = nil) {
        self.intervalMilliseconds = intervalMilliseconds
        self.suspectIntervalMilliseconds = suspectIntervalMilliseconds
        self.timeoutMilliseconds = timeoutMilliseconds
        self.probeNames = probeNames
        self.successThresholdPercent = successThresholdPercent
        self.failuresToLeaveOnline = failuresToLeaveOnline
        self.successesToReturnOnline = successesToReturnOnline
        self.dailyBudgetBytes = dailyBudgetBytes
        self.probeWhenOnline = probeWhenOnline
        self.stallWindowMilliseconds = stallWindowMilliseconds
        self.livenessIntervalMilliseconds = livenessIntervalMilliseconds
    }

    /// How often an uplink that is not online is looked at (and where the suspect
    /// back-off stops): the interval, or 10 s when the uplink has liveness rounds (its
    /// light rounds are far apart because handshakes fill the gaps between them, and
    /// an uplink coming back must not wait that long).
    public var recheckIntervalMilliseconds: Int {
        livenessIntervalMilliseconds == nil ? intervalMilliseconds : min(intervalMilliseconds, 10_000)
    }

    /// The probes of `all` this uplink uses, in probe-set order.
    public func probes(from all: [ProbeSpec]) -> [ProbeSpec] {
        guard let probeNames else { return all }
        return all.filter { probeNames.contains($0.name) }
    }
}

/// Whether probe bytes on an uplink cost money.
public enum MeteredSetting: String, Sendable, CaseIterable {
    case yes
    case no
    /// Cellular uplinks, and uplinks whose DHCP lease says so (ANDROID_METERED, the
    /// vendor option phone hotspots send; NetworkManager reads it the same way).
    case auto
}

/// A limit that a more specific layer may switch off again (`daily-budget = off`).
public enum Limit: Sendable, Equatable {
    case off
    case value(Int)

    var value: Int? {
        if case .value(let value) = self { return value }
        return nil
    }
}

/// What one layer of the configuration sets (`[agent]`/`[check]`, `[kind KIND]`,
/// `[interface NAME]`, or the command line); nil leaves the layer below in force.
public struct ProbingOverrides: Sendable, Equatable {
    public var intervalMilliseconds: Int?
    public var suspectIntervalMilliseconds: Int?
    public var timeoutMilliseconds: Int?
    public var probeNames: [String]?
    public var successThresholdPercent: Int?
    public var failuresToLeaveOnline: Int?
    public var successesToReturnOnline: Int?
    public var dailyBudget: Limit?
    public var probeWhenOnline: Bool?
    public var metered: MeteredSetting?
    public var stallWindow: Limit?
    public var livenessInterval: Limit?
    public var recover: Bool?
    public var recoverAfterMilliseconds: Int?
    public var resetAfter: Limit?
    public var powerCycleAfter: Limit?
    public var metering = MeteringOverrides()

    public init() {}

    public var isEmpty: Bool { self == ProbingOverrides() }

    /// `settings` with what this layer sets put over it.
    public func applied(to settings: ProbingSettings) -> ProbingSettings {
        var result = settings
        if let intervalMilliseconds { result.intervalMilliseconds = intervalMilliseconds }
        if let suspectIntervalMilliseconds { result.suspectIntervalMilliseconds = suspectIntervalMilliseconds }
        if let timeoutMilliseconds { result.timeoutMilliseconds = timeoutMilliseconds }
        if let probeNames { result.probeNames = probeNames }
        if let successThresholdPercent { result.successThresholdPercent = successThresholdPercent }
        if let failuresToLeaveOnline { result.failuresToLeaveOnline = failuresToLeaveOnline }
        if let successesToReturnOnline { result.successesToReturnOnline = successesToReturnOnline }
        if let dailyBudget { result.dailyBudgetBytes = dailyBudget.value }
        if let probeWhenOnline { result.probeWhenOnline = probeWhenOnline }
        if let stallWindow { result.stallWindowMilliseconds = stallWindow.value }
        if let livenessInterval { result.livenessIntervalMilliseconds = livenessInterval.value }
        if let recover { result.recovery.enabled = recover }
        if let recoverAfterMilliseconds { result.recovery.recoverAfterMilliseconds = recoverAfterMilliseconds }
        if let resetAfter { result.recovery.resetAfterMilliseconds = resetAfter.value }
        if let powerCycleAfter { result.recovery.powerCycleAfterMilliseconds = powerCycleAfter.value }
        result.metering = metering.applied(to: result.metering)
        return result
    }
}
