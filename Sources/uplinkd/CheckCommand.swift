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

        guard var configuration = ConfigurationLoader.loadOrReport(explicitPath: parsed.configPath) else {
            return ExitStatus.configuration
        }
        if let timeout = parsed.timeoutMilliseconds { configuration.probeTimeoutMilliseconds = timeout }
        if let threshold = parsed.thresholdPercent { configuration.successThresholdPercent = threshold }
        if !parsed.probes.isEmpty {
            configuration.useDefaultProbes = false
            configuration.customProbes = parsed.probes
            if configuration.httpsOnly, let plain = parsed.probes.first(where: { $0.url.scheme == .http }) {
                return usageFailure("--url \(plain.url): https-only is set in the configuration")
            }
        }

        let reports: [CheckReport]
        do {
            reports = try CheckRunner(configuration: configuration).run(parsed.interfaces)
        } catch {
            printError("check failed: \(error)")
            return ExitStatus.software
        }
        for report in reports {
            print(parsed.json ? report.json.serialized() : report.humanLine)
        }
        return CheckPlanner.exitStatus(for: reports)
    }
}

/// Reads the configuration file: an explicitly named file must exist; the default
/// file is optional and built-in defaults apply without it.
enum ConfigurationLoader {
    static let maximumBytes = 1 << 20

    static func load(explicitPath: String?) throws(ConfigurationError) -> Configuration {
        let path = explicitPath ?? Configuration.defaultPath
        if explicitPath == nil && !SmallFile.exists(path) {
            return Configuration()
        }
        let bytes: [UInt8]
        do {
            bytes = try SmallFile.readAll(path, limit: maximumBytes)
        } catch {
            throw ConfigurationError(file: path, line: nil, key: nil, message: "cannot read: \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationError(file: path, line: nil, key: nil, message: "is not valid UTF-8 text")
        }
        return try ConfigurationParser(fileName: path).parse(text)
    }

    /// The configuration, or nil after printing where it is wrong (exit status 78).
    static func loadOrReport(explicitPath: String?) -> Configuration? {
        do {
            return try load(explicitPath: explicitPath)
        } catch {
            printError("\(error)")
            return nil
        }
    }
}
