import Glibc
import UplinkCore

/// The agent's word to systemd (`Type=notify`): READY=1 once every uplink has a verdict
/// or `ready-timeout` passed, STATUS= on every change, the watchdog's heartbeat, and
/// the reload and stop notices. The heartbeat and the start-up bound are timers of the
/// agent's loop: a loop that stops turning stops the heartbeat, and systemd restarts
/// it. Does nothing without a notification socket.
final class ServiceNotifications {
    private unowned let agent: Agent
    private let notifier: SystemdNotifier?
    /// READY=1 was sent.
    private var announcedReady = false

    init(agent: Agent, notifier: SystemdNotifier?) {
        self.agent = agent
        self.notifier = notifier
    }

    private var active: SystemdNotifier? { notifier.flatMap { $0.isActive ? $0 : nil } }

    func start() {
        guard let notifier = active else { return }
        agent.loop.schedule(afterMilliseconds: agent.configuration.agent.readyTimeoutMilliseconds) { [weak self] in
            guard let self, !announcedReady, agent.isRunning else { return }
            let state = agent.core.state(now: agent.now(), pid: Int(getpid()))
            Log.notice("ready after ready-timeout; still without a verdict: "
                       + state.uplinks.filter { $0.verdict == .unknown }.map(\.interface.value).joined(separator: " "))
            announceReady(state)
        }
        if let interval = notifier.watchdogMilliseconds { heartbeat(every: max(1, interval / 2)) }
    }

    /// READY=1 once every uplink has a verdict; STATUS= on every change after that.
    func stateChanged(_ state: AgentState) {
        guard let notifier = active, agent.isRunning else { return }
        if announcedReady {
            notifier.status(state.summaryLine)
        } else if state.isSettled {
            announceReady(state)
        } else {
            notifier.status("starting; " + state.summaryLine)
        }
    }

    /// Sent as the reload begins. The stamp is read now, not the loop's cached
    /// millisecond: systemd (notify-reload) ignores one older than the signal it sent.
    func reloading() {
        notifier?.reloading(monotonicMicroseconds: Int(agent.loop.time.monotonicNanoseconds / 1_000))
    }

    /// Ready again after a reload, with the new configuration or the old.
    func reloaded(_ state: @autoclosure () -> AgentState) {
        if announcedReady { notifier?.ready(status: state().summaryLine) }
    }

    func stopping() {
        notifier?.stopping()
    }

    private func heartbeat(every milliseconds: Int) {
        notifier?.watchdog()
        agent.loop.schedule(afterMilliseconds: milliseconds) { [weak self] in self?.heartbeat(every: milliseconds) }
    }

    private func announceReady(_ state: AgentState) {
        announcedReady = true
        notifier?.ready(status: state.summaryLine)
    }
}
