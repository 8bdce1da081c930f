import UplinkCore

/// Samples the primary's packet counters while the core wants them (stall detection),
/// at the pace it asks for: one timer, moved when the primary changes.
final class TrafficSampler {
    private unowned let agent: Agent
    /// The next sample, and whose.
    private var timer: (id: EventLoop.TimerID, interface: InterfaceName)?
    private var ownTraffic: [(InterfaceName) -> (sent: UInt64, received: UInt64)] = []
    private var filter = OwnTrafficFilter()

    init(agent: Agent) {
        self.agent = agent
    }

    /// Adds a count of packets the agent sent and received for itself through an
    /// uplink (its MQTT connection), cumulative: samples leave them out, so the
    /// agent's own traffic never vouches for the LAN's, nor raises a stall alarm.
    func countOwnTraffic(_ source: @escaping (InterfaceName) -> (sent: UInt64, received: UInt64)) {
        ownTraffic.append(source)
    }

    func schedule() {
        guard agent.isRunning, let target = agent.core.trafficSampling() else { return cancel() }
        if let timer {
            guard timer.interface != target.interface else { return }
            agent.loop.cancel(timer.id)
        }
        let id = agent.loop.schedule(afterMilliseconds: target.delayMilliseconds) { [weak self] in
            guard let self else { return }
            timer = nil
            sample(target.interface)
        }
        timer = (id, target.interface)
    }

    func cancel() {
        if let timer { agent.loop.cancel(timer.id) }
        timer = nil
    }

    private func sample(_ interface: InterfaceName) {
        guard let packets = agent.adapters.traffic.packets(of: interface) else { return schedule() }
        // The agent's own connections' packets are left out.
        var own = OwnTrafficFilter.Counts(received: 0, transmitted: 0)
        for source in ownTraffic {
            let counts = source(interface)
            own.received += counts.received
            own.transmitted += counts.sent
        }
        let counts = filter.filtered(interface, device: .init(received: packets.received, transmitted: packets.transmitted),
                                     own: own)
        let actions = agent.core.trafficSampled(interface, receivedPackets: counts.received,
                                                transmittedPackets: counts.transmitted, now: agent.now())
        // Most samples change nothing: only the next one is due then.
        guard !actions.isEmpty else { return schedule() }
        agent.perform(actions)
    }
}
