import Glibc
import UplinkCore

/// Writes the Prometheus textfile (`[export] prometheus-textfile`): the published
/// state and the counters since start (`MetricCounters`) in the text format
/// (`PrometheusText`), replaced atomically (`AtomicFile`) on every change, so
/// node_exporter never reads half a file. The path is given with each change, so a
/// reload that moves it takes effect at the next one; the file at the old path is
/// removed (left there it would be exported, stale, for ever). A failure is logged
/// once per distinct error and never stops the agent: the next change tries again.
package final class MetricsExporter {
    private var counters = MetricCounters()
    /// What the file at `path` says, to skip writes that would change nothing but
    /// the write time.
    private var written: (path: String, state: AgentState, counters: MetricCounters)?
    /// The path `AtomicFile.prepare` last succeeded for.
    private var preparedPath: String?
    /// The last failure logged, so a lasting one is not logged at every change.
    /// Writing the textfile fails (told once, then hourly, then when it works again).
    private var unwritable = RecurringCondition()
    /// When the file was last written (monotonic).
    private var writtenMilliseconds: Int?

    package init() {}

    /// Counts the outage journal's records a change closed; written with the next
    /// change's file.
    package func count(_ records: [JournalRecord]) {
        counters.count(records)
    }

    /// Counts `events` (the hook events of this change of the state) and
    /// `probeBytes` (per uplink since start), then writes the file at `path` if
    /// anything it shows changed. Nil `path`: no export (and a file written earlier is
    /// removed).
    package func publish(_ state: AgentState, events: [HookEvent], probeBytes: [InterfaceName: Int],
                        stallAlarms: [InterfaceName: [StallRule: Int]] = [:],
                        hookEventsPending: Int = 0, nowMilliseconds: Int = 0, to path: String?) {
        counters.count(events)
        counters.probeBytes = probeBytes
        counters.stallAlarms = stallAlarms
        counters.hookEventsPending = hookEventsPending
        if let written, written.path != path {
            unlink(written.path)
            Log.notice("metrics textfile \(written.path) removed: \(path.map { "now writing \($0)" } ?? "no longer exported")")
            self.written = nil
        }
        guard let path else { return }
        if let written, written.state.sameContent(as: state) {
            if written.counters == counters { return }
            // Probe bytes grow with every round: alone, they are written at most once a
            // minute (the file usually lives on flash, and scrapes are that far apart).
            var others = counters
            others.probeBytes = written.counters.probeBytes
            if others == written.counters, let since = writtenMilliseconds, nowMilliseconds - since < MetricsExporter.bytesOnlyIntervalMilliseconds {
                return
            }
        }
        do {
            if preparedPath != path {
                try AtomicFile.prepare(path, what: "metrics textfile")
                preparedPath = path
            }
            try AtomicFile.replace(path, with: PrometheusText.format(state, counters: counters), durable: false)
        } catch {
            Log.occurred(&unwritable, now: nowMilliseconds, "writing metrics textfile: \(error)")
            return
        }
        Log.cleared(&unwritable, now: nowMilliseconds, "metrics textfile \(path) written again")
        written = (path, state, counters)
        writtenMilliseconds = nowMilliseconds
    }

    /// Least time between rewrites for a change of probe bytes alone.
    package static let bytesOnlyIntervalMilliseconds = 60_000
}
