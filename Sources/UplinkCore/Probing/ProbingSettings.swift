/// How one uplink is probed and judged once every layer of the configuration is
/// applied: built-in defaults for its class (metered or not), then `[agent]`/`[check]`,
/// then `[kind KIND]`, then `[interface NAME]`. One global setting cannot watch an
/// unmetered primary closely and a metered backup cheaply; these can.
package struct ProbingSettings: Sendable, Equatable {
    /// Between rounds while the uplink is stable (light rounds while online).
    package var intervalMilliseconds: Int
    /// First interval while suspect; doubles up to `intervalMilliseconds`.
    package var suspectIntervalMilliseconds: Int
    /// Ceiling of one probe's HTTP exchange; rounds on an online uplink use less (the
    /// uplink's measured round-trip time decides, see `RoundTripEstimator`).
    package var timeoutMilliseconds: Int
    /// The probes to use, by name; nil: the whole probe set.
    package var probeNames: [String]?
    /// Share of a full round's probes that must validate for `online`.
    package var successThresholdPercent: Int
    /// Consecutive failed full rounds before an `online` uplink is given up. A full
    /// round runs only on doubt (a failed light probe, a link event, a passive alarm),
    /// so one failed full round is already the second piece of evidence.
    package var failuresToLeaveOnline: Int
    /// Consecutive validated rounds before a non-online uplink is `online` again.
    package var successesToReturnOnline: Int
    /// Daily probe byte budget; nil: none.
    package var dailyBudgetBytes: Int?
    /// Probe while online (false: only on link events and passive alarms).
    package var probeWhenOnline: Bool
    /// Passive stall detection: packets leaving with nothing coming back for this long
    /// make the uplink suspect. Nil: off.
    package var stallWindowMilliseconds: Int?
    /// Between light rounds of an online uplink, a bare TCP handshake this often
    /// (`RoundPurpose.liveness`). Nil: off.
    package var livenessIntervalMilliseconds: Int?
    /// The modem recovery ladder of a cellular uplink.
    package var recovery = RecoverySettings()
    /// Its data plan, how it waits as a backup, how it is watched as the primary.
    package var metering = MeteringSettings.defaults(metered: false)

    /// The built-in defaults of a class. Unmetered (ethernet, most Wi-Fi): a light
    /// round (one HTTP exchange, about 950 bytes) every 30 s and a bare handshake
    /// (224 bytes) every 4 s between them, about 290 KB an hour idle (210 MB a month;
    /// answered LAN traffic skips them), so an idle dead upstream is found within
    /// seconds. Metered (cellular, phone hotspots): one light round every 20 min,
    /// about 1.4 KiB each with its DNS lookup, about 3 MB a month.
    package static func defaults(metered: Bool) -> ProbingSettings {
        ProbingSettings(
            intervalMilliseconds: metered ? 1_200_000 : 30_000,
            suspectIntervalMilliseconds: metered ? 1_000 : 500,
            timeoutMilliseconds: 5_000, probeNames: nil, successThresholdPercent: 50,
            failuresToLeaveOnline: 1, successesToReturnOnline: 2, dailyBudgetBytes: nil,
            probeWhenOnline: true, stallWindowMilliseconds: 1_500, livenessIntervalMilliseconds: metered ? nil : 4_000)
    }

    package init(intervalMilliseconds: Int, suspectIntervalMilliseconds: Int, timeoutMilliseconds: Int,
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
    package var recheckIntervalMilliseconds: Int {
        livenessIntervalMilliseconds == nil ? intervalMilliseconds : min(intervalMilliseconds, 10_000)
    }

    /// The probes of `all` this uplink uses, in probe-set order.
    package func probes(from all: [ProbeSpec]) -> [ProbeSpec] {
        guard let probeNames else { return all }
        return all.filter { probeNames.contains($0.name) }
    }
}

/// Whether probe bytes on an uplink cost money.
package enum MeteredSetting: String, Sendable, CaseIterable {
    case yes
    case no
    /// Cellular uplinks, and uplinks whose DHCP lease says so (ANDROID_METERED, the
    /// vendor option phone hotspots send; NetworkManager reads it the same way).
    case auto
}

/// A limit that a more specific layer may switch off again (`daily-budget = off`).
package enum Limit: Sendable, Equatable {
    case off
    case value(Int)

    var value: Int? {
        if case .value(let value) = self { return value }
        return nil
    }
}

/// What one layer of the configuration sets (`[agent]`/`[check]`, `[kind KIND]`,
/// `[interface NAME]`, or the command line); nil leaves the layer below in force.
package struct ProbingOverrides: Sendable, Equatable {
    package var intervalMilliseconds: Int?
    package var suspectIntervalMilliseconds: Int?
    package var timeoutMilliseconds: Int?
    package var probeNames: [String]?
    package var successThresholdPercent: Int?
    package var failuresToLeaveOnline: Int?
    package var successesToReturnOnline: Int?
    package var dailyBudget: Limit?
    package var probeWhenOnline: Bool?
    package var metered: MeteredSetting?
    package var stallWindow: Limit?
    package var livenessInterval: Limit?
    package var recover: Bool?
    package var recoverAfterMilliseconds: Int?
    package var resetAfter: Limit?
    package var powerCycleAfter: Limit?
    package var metering = MeteringOverrides()

    package init() {}

    package var isEmpty: Bool { self == ProbingOverrides() }

    /// `settings` with what this layer sets put over it.
    package func applied(to settings: ProbingSettings) -> ProbingSettings {
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
