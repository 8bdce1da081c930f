import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd wait-online [IFACE... | --any] [--timeout S] [--captive-ok] [--state FILE]`:
/// boot ordering, as systemd-networkd-wait-online. Exits 0 as soon as the running
/// agent's state file satisfies the condition (`WaitCondition`), 1 with what is still
/// missing once the time is up, 64 for a usage mistake.
enum WaitOnlineCommand {
    /// As systemd-networkd-wait-online's default.
    static let defaultTimeoutMilliseconds = 120_000
    static let maximumTimeoutMilliseconds = 86_400_000
    /// The file is read again at least this often, events or not: the agent's process
    /// can die without the file changing, and a watch cannot be made on a directory
    /// that does not exist yet.
    static let rereadMilliseconds = 1_000

    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var names: [InterfaceName] = []
        var any = false
        var captiveAccepted = false
        var timeoutMilliseconds = defaultTimeoutMilliseconds
        var path = AgentPolicy().stateFilePath
        let early = ArgumentReader.readOptions(arguments, for: "wait-online") { option, inline, reader throws(UsageError) in
            switch option {
            case "--any", "--captive-ok":
                if inline != nil { throw UsageError("\(option) takes no value") }
                if option == "--any" { any = true } else { captiveAccepted = true }
            case "--timeout":
                let text = try reader.value(for: option, inline: inline)
                guard let milliseconds = CheckArguments.parseSeconds(text, range: 0...maximumTimeoutMilliseconds) else {
                    throw UsageError("--timeout: expected seconds from 0 (wait forever) to 86400, such as 30, 2.5, "
                        + "500ms, 2m or 1h; got '\(text.printableEscaped)'")
                }
                timeoutMilliseconds = milliseconds
            case "--state":
                path = try pathValue(option, try reader.value(for: option, inline: inline))
            default:
                if option.hasPrefix("-") { return false }
                if let problem = InterfaceName.problem(with: option) { throw UsageError("wait-online: \(problem)") }
                let name = InterfaceName(option)!
                if !names.contains(name) { names.append(name) }
            }
            return true
        }
        if let early { return early }
        if any && !names.isEmpty { return usageFailure("wait-online: --any and interface names exclude each other") }

        let target: WaitCondition.Target = any ? .anyUplink : names.isEmpty ? .primary : .uplinks(names)
        let condition = WaitCondition(target: target, captiveAccepted: captiveAccepted)
        let clock = SystemTimeSource()
        // Watching starts before the first read, so no change after it goes unheard.
        let watcher = StateFileWatcher(path: path, time: clock)
        let start = clock.monotonicMilliseconds
        while true {
            let outcome = look(at: path, for: condition)
            guard case .missing(let missing) = outcome else { return 0 }
            let elapsed = clock.monotonicMilliseconds - start
            if timeoutMilliseconds > 0 && elapsed >= timeoutMilliseconds {
                printError("wait-online: timed out after \(secondsText(timeoutMilliseconds)): \(missing)")
                return 1
            }
            let left = timeoutMilliseconds > 0 ? timeoutMilliseconds - elapsed : rereadMilliseconds
            _ = watcher.wait(milliseconds: min(rereadMilliseconds, left))
        }
    }

    /// The condition's answer for the file as it is now; a missing or unreadable file
    /// is something still missing (the agent may be about to write it).
    private static func look(at path: String, for condition: WaitCondition) -> WaitCondition.Outcome {
        let state: AgentState
        do {
            state = try StateFileReader.read(path)
        } catch {
            switch error {
            case .unreadable(let error) where error.errno == ENOENT:
                return .missing("no state file \(path) yet (is 'uplinkd run' running?)")
            case .unreadable(let error): return .missing("cannot read the state file: \(error)")
            case .malformed(let error): return .missing("state file \(path): \(error)")
            }
        }
        return condition.evaluate(state, agentRunning: state.writtenByRunningAgent(processExists: ProcessTable.exists))
    }

    /// "120 s", "2.5 s", "0.25 s".
    static func secondsText(_ milliseconds: Int) -> String {
        let fraction = milliseconds % 1_000
        guard fraction != 0 else { return "\(milliseconds / 1_000) s" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(milliseconds / 1_000).\(digits) s"
    }
}
