import UplinkCore

extension Agent {
    /// How the agent meets the process: signals, state file, hooks.
    package struct Options {
        package var stateFileOverride: String?
        package var hooksDirectoryOverride: String?
        /// TERM/INT stop and HUP reloads (the daemon); an embedding program keeps its
        /// signals and calls `requestStop`.
        package var handleSignals = true
        /// Publish the state file (an embedding program may only want the API).
        package var writeStateFile = true
        /// Run hooks from the hooks directory.
        package var runHooks = true
        /// Set the process's log threshold from `log-level` (the daemon; an embedding
        /// program keeps its own).
        package var setsLogLevel = false
        /// `--verbose`: the threshold is the more verbose of this and `log-level`.
        package var logLevelOverride: Log.Level?
        /// Tell systemd about readiness, status, reloads and the watchdog when it
        /// gave a notification socket (NOTIFY_SOCKET): the daemon only, since the
        /// socket belongs to the service's main process.
        package var notifySystemd = false
        /// Look after uplinkd's routing entries: remove leftovers at start and the
        /// entries at a stop (unless `keep-routes-on-stop`), and have the hooks repair
        /// them when someone else changes them. The daemon only: an embedding program
        /// must not remove the routes of the uplinkd running beside it.
        package var managesRouting = false
        /// Keep the outage journal (`journal-file`): the daemon only, since an
        /// embedding program's agent would write the daemon's journal as its own.
        package var keepsJournal = false
        /// `--journal FILE`: the journal's path instead of `journal-file`.
        package var journalFileOverride: String?
        /// `--plan-file FILE`: the data plans' counts there instead of `plan-file`.
        package var planFileOverride: String?

        package init(stateFileOverride: String? = nil, hooksDirectoryOverride: String? = nil) {
            self.stateFileOverride = stateFileOverride
            self.hooksDirectoryOverride = hooksDirectoryOverride
        }

        /// `configuration` with the command line's overrides (`--state`, `--hooks-dir`,
        /// `--journal`, `--plan-file`).
        func applied(to configuration: Configuration) -> Configuration {
            var configuration = configuration
            if let state = stateFileOverride { configuration.agent.stateFilePath = state }
            if let hooks = hooksDirectoryOverride { configuration.agent.hooksDirectory = hooks }
            if let journal = journalFileOverride { configuration.agent.journal.path = journal }
            if let plans = planFileOverride { configuration.agent.plans.path = plans }
            return configuration
        }
    }
}
