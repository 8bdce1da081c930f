import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Configuration: degradation and flap damping")
struct DampingConfigurationTests {
    @Test func agentKeysForDegradationAndDamping() throws {
        let agent = try parse("""
            [agent]
            avoid-degraded = any
            degraded-loss = 15%
            degraded-rtt = 800ms
            degraded-for = 2m
            flap-penalty = 500
            flap-half-life = 10m
            flap-suppress = 2000
            flap-reuse = 1000
            flap-max-suppress = 1h
            """).agent
        #expect(agent.avoidDegraded == .any)
        #expect(agent.quality.lossPercent == 15)
        #expect(agent.quality.roundTripMilliseconds == 800)
        #expect(agent.degradedForMilliseconds == 120_000)
        #expect(agent.damping.penaltyPerFlap == 500)
        #expect(agent.damping.halfLifeMilliseconds == 600_000)
        #expect(agent.damping.suppressLimit == 2_000)
        #expect(agent.damping.reuseLimit == 1_000)
        #expect(agent.damping.maximumSuppressMilliseconds == 3_600_000)
    }

    @Test func withoutTheKeysTheDefaultsHold() throws {
        let agent = try parse("[agent]\nhold-down = 10s\n").agent
        #expect(agent.avoidDegraded == .unmetered)
        #expect(agent.quality == QualityThresholds())
        #expect(agent.degradedForMilliseconds == 60_000)
        #expect(agent.damping == DampingSettings())
    }

    @Test func flapDampingCanBeTurnedOff() throws {
        #expect(try parse("[agent]\nflap-penalty = 0\navoid-degraded = no\n").agent.damping.penaltyPerFlap == 0)
    }

    /// Named where it was set: flap-reuse if it was, else flap-suppress.
    @Test(arguments: [("[agent]\nflap-reuse = 1500\n", 2, "flap-reuse"), ("[agent]\nflap-suppress = 700\n", 2, "flap-suppress"),
                      ("[agent]\nflap-suppress = 3000\nflap-reuse = 4000\n", 3, "flap-reuse")])
    func aReuseLimitNotBelowTheSuppressLimitIsRefused(text: String, line: Int, key: String) {
        expectError(text, line: line, key: key, mentioning: "flap-suppress")
    }

    @Test func aMaximumSuppressTooShortForThePenaltyToReachTheLimitIsRefused() {
        // 750 · 2^(1 min / 5 min) ≈ 862: never 1500, so damping could never act.
        expectError("[agent]\nflap-max-suppress = 1m\n", line: 2, key: "flap-max-suppress", mentioning: "flap-suppress")
    }

    @Test(arguments: [
        ("[agent]\navoid-degraded = maybe\n", "avoid-degraded"),
        ("[agent]\ndegraded-loss = 0%\n", "degraded-loss"),
        ("[agent]\ndegraded-rtt = 500\n", "degraded-rtt"),
        ("[agent]\nflap-half-life = 500ms\n", "flap-half-life"),
        ("[agent]\nflap-penalty = -1\n", "flap-penalty"),
        ("[agent]\nflap-max-suppress = 30d\n", "flap-max-suppress"),
    ])
    func badDegradationAndDampingValues(text: String, key: String) {
        expectError(text, line: 2, key: key)
    }
}
