import UplinkCore

/// ModemManager's modems for the agent: follows them into the core, from the moment
/// the agent has an uplink a modem could carry (or at once with `modemmanager = yes`),
/// and carries out what the core asks of them (the recovery ladder's steps, a cold
/// backup's parked bearer). Runs on the agent's loop.
final class ModemDriver {
    private unowned let agent: Agent
    private var source: ModemSource?

    init(agent: Agent) {
        self.agent = agent
    }

    /// Starts following the modems once they are wanted (`AgentCore.wantsModems`);
    /// called after every change of the links. Once started, it follows on.
    func startIfWanted() {
        guard source == nil, agent.isRunning, agent.core.wantsModems,
              let source = agent.adapters.modems(agent.loop) else { return }
        self.source = source
        source.onChange = { [unowned agent] modems in
            guard agent.isRunning else { return }
            agent.perform(agent.core.modemsChanged(modems, now: agent.now()))
        }
        source.start(signalIntervalMilliseconds: agent.configuration.agent.modems.signalIntervalMilliseconds)
    }

    func recover(_ equipmentID: String, _ step: RecoveryStep) {
        switch step {
        case .reconnect: source?.reconnect(equipmentID)
        case .reset: source?.reset(equipmentID)
        case .powerCycle: break
        }
    }

    func setBearer(_ equipmentID: String, connected: Bool) {
        source?.setBearer(equipmentID, connected: connected)
    }

    /// At the stop: parked bearers dial again. Sent now, flushed when the bus closes
    /// after the loop: ModemManager dials on after we are gone.
    func stop() {
        for id in agent.core.parkedBearers { source?.setBearer(id, connected: true) }
    }

    /// After the loop: the bus connection goes.
    func close() {
        source = nil
    }
}
