import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd run`: the agent in the foreground (systemd runs it).
enum RunCommand {
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var options = Agent.Options()
        options.setsLogLevel = true
        options.notifySystemd = true
        options.managesRouting = true
        options.keepsJournal = true
        var configPath: String?
        let early = ArgumentReader.readOptions(arguments, for: "run") { option, inline, reader throws(UsageError) in
            switch option {
            case "--config": configPath = try reader.value(for: option, inline: inline)
            case "--state": options.stateFileOverride = try pathValue(option, try reader.value(for: option, inline: inline))
            case "--journal": options.journalFileOverride = try pathValue(option, try reader.value(for: option, inline: inline))
            case "--plan-file": options.planFileOverride = try pathValue(option, try reader.value(for: option, inline: inline))
            case "--hooks-dir": options.hooksDirectoryOverride = try pathValue(option, try reader.value(for: option, inline: inline))
            case "--verbose", "-v": options.logLevelOverride = options.logLevelOverride == .info ? .debug : .info
            default: return false
            }
            return true
        }
        if let early { return early }
        // Until the configuration says otherwise (its log-level), notices are shown.
        Log.threshold = options.logLevelOverride ?? .notice
        guard let configuration = loadConfigurationOrReport(explicitPath: configPath) else {
            return ExitStatus.configuration
        }
        do {
            let agent = try Agent(configuration: configuration, options: options,
                                  loader: ConfigurationLoader(explicitPath: configPath))
            // The push channel, attached from outside the agent; a credentials file
            // that is not the agent's own is a configuration error.
            let mqtt: MQTTBridge?
            do {
                mqtt = try MQTTBridge.attach(to: agent, settings: configuration.mqtt)
            } catch {
                printError("\(error)")
                return ExitStatus.configuration
            }
            try agent.run()
            withExtendedLifetime(mqtt) {}
            Log.notice("stopped")
            return 0
        } catch {
            printError("\(error)")
            return ExitStatus.software
        }
    }
}
