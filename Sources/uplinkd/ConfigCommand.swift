import Glibc
import UplinkCore
import UplinkLinux

/// `uplinkd config check [--config FILE]`: validates the configuration (the file and
/// its drop-ins) without running
/// anything, as `sshd -t` does, so an edit can be checked before a reload. Exit 0 when
/// it would load (hooks that will not run are listed as warnings), 78 with the
/// file:line:key error when it would not.
enum ConfigCommand {
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        guard arguments.first == "check" else {
            return usageFailure(arguments.first.map { "unknown config command '\($0.printableEscaped)'; expected 'check'" }
                                ?? "missing config command; expected 'check'")
        }
        var configPath: String?
        let early = ArgumentReader.readOptions(arguments.dropFirst(), for: "config check") { option, inline, reader throws(UsageError) in
            switch option {
            case "--config": configPath = try reader.value(for: option, inline: inline)
            default: return false
            }
            return true
        }
        if let early { return early }
        let loader = ConfigurationLoader(explicitPath: configPath)
        guard let configuration = loadConfigurationOrReport(explicitPath: configPath) else {
            return ExitStatus.configuration
        }
        let files = (try? loader.files()) ?? []
        let source = files.isEmpty ? "built-in defaults (\(loader.path) does not exist)" : files.joined(separator: ", ")
        let directories = HookDirectories(configuration.agent)
        let survey = directories.survey()
        for problem in survey.problems { printError("warning: \(problem)") }
        print("configuration OK: \(source); \(configuration.probes.count) probes; "
              + "\(survey.hooks.count) hooks in \(directories.directory) and \(directories.vendorDirectory)")
        return 0
    }
}
