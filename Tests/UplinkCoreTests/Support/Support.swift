import Testing
import UplinkCore
import UplinkTestSupport

// Helpers shared by the core tests (one place; the LinkFacts builders are in
// UplinkTestSupport, shared with the adapter tests).

// Verdicts used across suites.
let online = Assessment(.online, reason: .validated)
let limited = Assessment(.limited, reason: .timeout)
let captive = Assessment(.captive, reason: .redirect, portalURL: "http://portal.example/login")

func policy(_ change: (inout AgentPolicy) -> Void = { _ in }) -> AgentPolicy {
    var policy = AgentPolicy()
    policy.holdDownMilliseconds = 30_000
    change(&policy)
    return policy
}

/// Probing settings for the tests: a round every minute, back-off from 1 s, two
/// rounds either way, no stall detection (tests that want it set it).
func probing(_ change: (inout ProbingSettings) -> Void = { _ in }) -> ProbingSettings {
    var settings = ProbingSettings.defaults(metered: false)
    settings.intervalMilliseconds = 60_000
    settings.suspectIntervalMilliseconds = 1_000
    settings.failuresToLeaveOnline = 2
    settings.successesToReturnOnline = 2
    settings.stallWindowMilliseconds = nil
    settings.livenessIntervalMilliseconds = nil
    change(&settings)
    return settings
}

/// `settings` as a layer that sets every one of them (the `[agent]` layer).
func overrides(_ settings: ProbingSettings) -> ProbingOverrides {
    var layer = ProbingOverrides()
    layer.intervalMilliseconds = settings.intervalMilliseconds
    layer.suspectIntervalMilliseconds = settings.suspectIntervalMilliseconds
    layer.timeoutMilliseconds = settings.timeoutMilliseconds
    layer.probeNames = settings.probeNames
    layer.successThresholdPercent = settings.successThresholdPercent
    layer.failuresToLeaveOnline = settings.failuresToLeaveOnline
    layer.successesToReturnOnline = settings.successesToReturnOnline
    layer.dailyBudget = settings.dailyBudgetBytes.map(Limit.value) ?? .off
    layer.probeWhenOnline = settings.probeWhenOnline
    layer.stallWindow = settings.stallWindowMilliseconds.map(Limit.value) ?? .off
    layer.livenessInterval = settings.livenessIntervalMilliseconds.map(Limit.value) ?? .off
    return layer
}

/// An `[interface NAME]` section with only a daily budget.
func withBudget(_ bytes: Int) -> InterfaceSettings {
    var settings = InterfaceSettings()
    settings.probing.dailyBudget = .value(bytes)
    return settings
}

/// A configuration with this agent policy, these probing settings for every uplink,
/// and interface sections.
func configuration(_ policy: AgentPolicy, probing settings: ProbingSettings = probing(),
                   interfaces: [InterfaceName: InterfaceSettings] = [:]) -> Configuration {
    var configuration = Configuration()
    configuration.agent = policy
    configuration.probing = overrides(settings)
    configuration.interfaces = interfaces
    return configuration
}

// Probes and responses.
/// Swift Testing also has an `Expectation`; in these tests the name means the probe's.
typealias Expectation = UplinkCore.Expectation

func url(_ text: String) throws -> ProbeURL {
    try ProbeURL(parsing: text)
}

func probe(_ text: String, _ expectation: Expectation = Expectation(status: 204),
           name: String = "p", authorization: String? = nil) throws -> ProbeSpec {
    ProbeSpec(name: name, url: try url(text), expectation: expectation, authorization: authorization)
}

func response(_ status: Int, body: String = "", location: String? = nil,
              validatorAccepted: Bool? = nil) -> ProbeOutcome {
    .response(ProbeResponse(status: status, location: location, body: Array(body.utf8),
                            validatorAccepted: validatorAccepted))
}

let loginPage = """
    <!DOCTYPE html>
    <html><head><title>Welcome to Hotel Wi-Fi</title></head>
    <body><form action="/login" method="post"><input name="room"><button>Connect</button></form></body>
    </html>
    """

// Configuration parsing.
let fileName = "/etc/uplinkd/test.conf"

func parse(_ text: String) throws -> Configuration {
    try ConfigurationParser(fileName: fileName).parse(text)
}

/// The error of parsing `text`, or nil (recorded as a test failure) when it parses.
func parseError(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> ConfigurationError? {
    do {
        _ = try ConfigurationParser(fileName: fileName).parse(text)
        Issue.record("expected a configuration error", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// Checks that `text` fails at `line` with `key`, and that the message mentions `mentioning`.
func expectError(_ text: String, line: Int?, key: String?, mentioning: String? = nil,
                 sourceLocation: SourceLocation = #_sourceLocation) {
    guard let error = parseError(text, sourceLocation: sourceLocation) else { return }
    #expect(error.file == fileName, sourceLocation: sourceLocation)
    #expect(error.line == line, "\(error)", sourceLocation: sourceLocation)
    #expect(error.key == key, "\(error)", sourceLocation: sourceLocation)
    if let mentioning {
        #expect(error.message.contains(mentioning), "\(error)", sourceLocation: sourceLocation)
    }
}

// Addresses.
func addresses(_ texts: String...) -> [IPAddress] { texts.map { IPAddress($0)! } }
