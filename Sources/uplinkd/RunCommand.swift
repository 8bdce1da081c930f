import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd run`: the agent in the foreground (systemd runs it).
enum RunCommand {
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var reader = ArgumentReader(arguments)
        var options = Agent.Options(configPath: nil, stateFileOverride: nil, hooksDirectoryOverride: nil)
        do throws(UsageError) {
            while let (option, inline) = reader.next() {
                switch option {
                case "--config": options.configPath = try reader.value(for: option, inline: inline)
                case "--state": options.stateFileOverride = try pathValue(option, try reader.value(for: option, inline: inline))
                case "--hooks-dir": options.hooksDirectoryOverride = try pathValue(option, try reader.value(for: option, inline: inline))
                case "--verbose", "-v": Log.threshold = Log.threshold == .info ? .debug : .info
                case "--help", "-h":
                    print(helpText)
                    return 0
                default: throw UsageError("unknown argument '\(option.printableEscaped)' for run")
                }
            }
        } catch {
            return usageFailure(error.message)
        }
        if Log.threshold > .notice { Log.threshold = .notice }
        guard let configuration = ConfigurationLoader.loadOrReport(explicitPath: options.configPath) else {
            return ExitStatus.configuration
        }
        do {
            let agent = try Agent(configuration: configuration, options: options) { path throws(ConfigurationError) in
                try ConfigurationLoader.load(explicitPath: path)
            }
            try agent.run()
            Log.notice("stopped")
            return 0
        } catch {
            printError("\(error)")
            return ExitStatus.software
        }
    }

    static func pathValue(_ option: String, _ value: String) throws(UsageError) -> String {
        do {
            return try ValueParser.absolutePath(value.hasPrefix("/") ? value : currentDirectory() + "/" + value)
        } catch {
            throw UsageError("\(option): \(error.message)")
        }
    }

    static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        return String(cString: buffer)
    }
}

/// `uplinkd status [--json] [--state FILE]`: reads the state file, with or without a
/// running agent, and says how old it is.
enum StatusCommand {
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var reader = ArgumentReader(arguments)
        var json = false
        var path = AgentPolicy().stateFilePath
        do throws(UsageError) {
            while let (option, inline) = reader.next() {
                switch option {
                case "--json": json = true
                case "--state": path = try RunCommand.pathValue(option, try reader.value(for: option, inline: inline))
                case "--help", "-h":
                    print(helpText)
                    return 0
                default: throw UsageError("unknown argument '\(option.printableEscaped)' for status")
                }
            }
        } catch {
            return usageFailure(error.message)
        }
        let state: AgentState
        do {
            let bytes = try SmallFile.readAll(path, limit: 1 << 20)
            state = try StateFileFormat.decode(String(decoding: bytes, as: UTF8.self))
        } catch let error as SystemError {
            printError("cannot read state file \(path): \(error); is 'uplinkd run' running?")
            return ExitStatus.unavailable
        } catch {
            printError("state file \(path): \(error)")
            return ExitStatus.unavailable
        }
        let now = Int(time(nil))
        let age = max(0, now - state.writtenWallSeconds)
        let running = !state.stopped && state.pid > 0 && (kill(pid_t(state.pid), 0) == 0 || errno == EPERM)
        if json {
            guard case .object(var members) = state.json else { return ExitStatus.software }
            members.insert(("age_seconds", .int(age)), at: 2)
            members.insert(("agent_running", .bool(running)), at: 3)
            print(JSONValue.object(members).serialized())
        } else {
            print("primary: \(state.primary ?? "none")")
            print("written \(age) s ago by pid \(state.pid) (\(running ? "running" : "not running"))")
            for uplink in state.uplinks {
                var line = "\(uplink.interface): \(uplink.verdict.rawValue) (\(uplink.kind.rawValue), \(uplink.reason)) since \(max(0, now - uplink.sinceWallSeconds)) s ago"
                if let portal = uplink.portalURL { line += ", portal \(portal)" }
                if let v4 = uplink.ipv4, let v6 = uplink.ipv6 {
                    line += ", ipv4 \(v4.rawValue) (\(uplink.ipv4Reason ?? "-")), ipv6 \(v6.rawValue) (\(uplink.ipv6Reason ?? "-"))"
                }
                if let source = uplink.dnsSource {
                    line += ", dns from \(source.rawValue)" + (source.isPerUplink ? "" : " (not per-uplink)")
                }
                line += ", \(uplink.bytesToday) probe bytes today"
                if let budget = uplink.budgetBytes {
                    line += " of \(budget)" + (uplink.budgetExhausted ? " (budget spent: probing on link events only)" : "")
                }
                print(line)
            }
        }
        return 0
    }
}
