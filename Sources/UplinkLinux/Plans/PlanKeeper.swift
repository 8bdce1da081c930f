import UplinkCore

/// The agent's runtime side of data plans: where counters are read, where the plans
/// are kept, the timer that reads them and when they were last written. The agent
/// owns it; everything runs on its loop.
final class PlanKeeper {
    /// Counters are read this often while an uplink has a plan: marks and the cap are
    /// noticed within this time, and a device lost without its last word (a missed
    /// removal) loses at most this much of its traffic.
    static let readingIntervalMilliseconds = 10_000

    let store: PlanStore?
    let counters: LinkCounting?
    var timer: EventLoop.TimerID?
    /// Uplinks whose counting had not begun when the agent last scheduled a reading:
    /// their baseline is taken at once, not a reading interval later, so what they
    /// carry from the start on is counted even by an agent stopped within seconds.
    var baselineAsked: Set<InterfaceName> = []
    private var lastSaveMilliseconds: Int

    init(store: PlanStore?, counters: LinkCounting?, nowMilliseconds: Int) {
        self.store = store
        self.counters = counters
        lastSaveMilliseconds = nowMilliseconds
    }

    /// The counters now, removals already queued reported first.
    func read(_ names: Set<InterfaceName>) -> [InterfaceName: CounterReading] {
        guard let counters, !names.isEmpty else { return [:] }
        counters.catchUp()
        return counters.readings(of: names)
    }

    func saveDue(nowMilliseconds: Int, intervalMilliseconds: Int) -> Bool {
        nowMilliseconds - lastSaveMilliseconds >= intervalMilliseconds
    }

    func save(_ ledgers: [InterfaceName: PlanLedger], nowMilliseconds: Int, wallSeconds: Int) {
        lastSaveMilliseconds = nowMilliseconds
        store?.save(ledgers, wallSeconds: wallSeconds)
    }
}
