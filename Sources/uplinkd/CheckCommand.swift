import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd check IFACE...`: one-shot verdicts, no daemon needed.
enum CheckCommand {
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        let parsed: CheckArguments
        do {
            parsed = try CheckArguments.parse(arguments)
        } catch {
            return usageFailure(error.message)
        }
        if parsed.helpRequested {
            print(helpText)
            return 0
        }
        if parsed.verbose { Log.threshold = .info }

        guard var configuration = loadConfigurationOrReport(explicitPath: parsed.configPath) else {
            return ExitStatus.configuration
        }
        // Over every layer of the file, `[interface NAME]` included.
        if let timeout = parsed.timeoutMilliseconds { configuration.commandLine.timeoutMilliseconds = timeout }
        if let threshold = parsed.thresholdPercent { configuration.commandLine.successThresholdPercent = threshold }
        if !parsed.probes.isEmpty {
            configuration.useDefaultProbes = false
            configuration.customProbes = parsed.probes
            configuration.commandLine.probeNames = parsed.probes.map(\.name)
            if configuration.httpsOnly, let plain = parsed.probes.first(where: { $0.url.scheme == .http }) {
                return usageFailure("--url \(plain.url): https-only is set in the configuration")
            }
        }

        let reports: [RoundReport]
        do {
            reports = try CheckRunner(configuration: configuration).run(parsed.interfaces)
        } catch {
            printError("check failed: \(error)")
            return ExitStatus.software
        }
        for report in reports {
            print(parsed.json ? report.json.serialized() : report.humanLine)
        }
        return RoundJudge.exitStatus(for: reports)
    }
}
