/// What the metrics export counts since the agent started, besides the published
/// state: changes of verdict and of primary (the hook events, which are exactly those
/// changes) and the bytes probes spent. Counters only ever grow, so Prometheus can
/// take rates of them; a restart of the agent starts them at 0, which it expects.
package struct MetricCounters: Sendable, Equatable {
    /// Verdict changes by uplink.
    package var verdictChanges: [InterfaceName: Int] = [:]
    /// Changes of the primary uplink, to or from none included.
    package var primaryChanges = 0
    /// Bytes of probes sent and received by uplink since the agent started; unlike the
    /// daily budget's count it never goes back to 0 (`ByteBudget.totalBytes`).
    package var probeBytes: [InterfaceName: Int] = [:]
    /// Stall alarms the agent acted on, by uplink and rule (the primary's traffic as
    /// evidence; the lone-packet rule's false alarms are its cost, counted here).
    package var stallAlarms: [InterfaceName: [StallRule: Int]] = [:]
    /// Hook events waiting to run, the one running included (a gauge: how far the
    /// hooks are behind the verdicts).
    package var hookEventsPending = 0
    /// Outages that ended since the agent started, from the journal's records: per
    /// uplink (periods not online) and of the site (periods without a primary), with
    /// their milliseconds.
    package var outages: [InterfaceName: Int] = [:]
    package var outageMilliseconds: [InterfaceName: Int] = [:]
    package var siteOutages = 0
    package var siteOutageMilliseconds = 0

    package init() {}

    /// Counts the journal records one change closed.
    package mutating func count(_ records: [JournalRecord]) {
        for record in records {
            switch record.kind {
            case .site:
                siteOutages += 1
                siteOutageMilliseconds += record.durationMilliseconds
            case .uplink:
                guard let name = record.interface else { continue }
                outages[name, default: 0] += 1
                outageMilliseconds[name, default: 0] += record.durationMilliseconds
            case .failover, .metered, .absent, .clock, .dropped:
                continue
            }
        }
    }

    /// Counts the hook events of one change of the state.
    package mutating func count(_ events: [HookEvent]) {
        // Other kinds (the stop event) change nothing that is counted.
        for event in events {
            if event.kind == .verdict, let interface = event.interface {
                verdictChanges[interface, default: 0] += 1
            } else if event.kind == .primary {
                primaryChanges += 1
            }
        }
    }
}
