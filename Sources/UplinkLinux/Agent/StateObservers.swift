import UplinkCore

/// Who is told of the agent's state besides the state file (the embedding API, the
/// MQTT bridge): observers of every change, of the journal's records as they are
/// appended, and observers of the stop, whom the loop
/// waits for (the MQTT goodbye) at most `Agent.stopObserverTimeoutMilliseconds`.
/// Called on the agent's loop.
final class StateObservers {
    private var changes: [(AgentState, [HookEvent]) -> Void] = []
    private var stops: [(AgentState, HookEvent?, @escaping () -> Void) -> Void] = []
    private var journals: [([JournalRecord]) -> Void] = []

    func observeJournal(_ observer: @escaping ([JournalRecord]) -> Void) {
        journals.append(observer)
    }

    func recorded(_ records: [JournalRecord]) {
        guard !records.isEmpty else { return }
        for observer in journals { observer(records) }
    }

    func observe(_ observer: @escaping (AgentState, [HookEvent]) -> Void) {
        changes.append(observer)
    }

    func onStop(_ observer: @escaping (AgentState, HookEvent?, @escaping () -> Void) -> Void) {
        stops.append(observer)
    }

    func changed(_ state: AgentState, events: [HookEvent]) {
        for observer in changes { observer(state, events) }
    }

    /// Tells every stop observer, then ends `loop` when all have called their
    /// completion, or after the time limit.
    func stopped(_ final: AgentState, event: HookEvent?, thenStop loop: EventLoop, timeoutMilliseconds: Int) {
        var waiting = stops.count
        guard waiting > 0 else { return loop.stop() }
        loop.schedule(afterMilliseconds: timeoutMilliseconds) { [weak loop] in loop?.stop() }
        for observer in stops {
            observer(final, event) { [weak loop] in
                waiting -= 1
                if waiting == 0 { loop?.stop() }
            }
        }
    }
}
