import Glibc
import UplinkCore

// Writing to a validator that exited must give EPIPE, not kill the agent.
signal(SIGPIPE, SIG_IGN)

/// The commands by name, one line each: adding a command is one line here (and its
/// synopsis in uplinkd(8), which ManPageTests checks against this table). A type of
/// its own, not a top-level value: top-level code runs on the main actor in Swift 6,
/// and a closure formed there carries a run-time isolation check that links Swift
/// Concurrency's runtime into the binary (0.7 MiB). `nonisolated(unsafe)`: the table
/// never changes and holds plain functions; written `@Sendable` instead, Swift 6.0's
/// type checker crashes on it (Debian 13's swiftlang).
enum Commands {
    nonisolated(unsafe) static let table: KeyValuePairs<String, (ArraySlice<String>) -> Int32> = [
        "check": CheckCommand.run,
        "links": LinksCommand.run,
        "run": RunCommand.run,
        "status": StatusCommand.run,
        "config": ConfigCommand.run,
        "wait-online": WaitOnlineCommand.run,
        "routes": RoutesCommand.run,
        "resolve": ResolveCommand.run,
        "plan": PlanCommand.run,
        "history": HistoryCommand.run,
        "availability": AvailabilityCommand.run,
    ]

    static func named(_ name: String) -> ((ArraySlice<String>) -> Int32)? {
        table.first { $0.key == name }?.value
    }
}

let arguments = CommandLine.arguments.dropFirst()
let status: Int32
switch arguments.first {
case "--version", "version":
    print("uplinkd \(UplinkVersion.string)\n\(BuildDescription.line)")
    status = 0
case "--help", "-h", "help":
    print(helpText)
    status = 0
case nil:
    status = usageFailure("missing command")
case let name?:
    if let command = Commands.named(name) {
        status = command(arguments.dropFirst())
    } else {
        status = usageFailure("unknown command '\(name.printableEscaped)'")
    }
}
// Every command has finished its work and closed what it wrote; what exit() would add
// is the libraries' own teardown (OpenSSL, GnuTLS, p11-kit, libnl free what the
// kernel frees anyway), 1 to 3 % of a `check` and 0.3 to 0.5 MiB of pages touched
// only to free memory. Standard output and error are flushed first.
fflush(nil)
_exit(status)
