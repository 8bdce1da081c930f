import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Aggregator")
struct AggregationTests {
    let timeout = ProbeClass.broken(reason: .timeout)
    let refused = ProbeClass.broken(reason: .refused)
    let dns = ProbeClass.broken(reason: .dnsFailed)

    @Test func halfOfProbesMeetsTheDefaultThreshold() {
        let result = Aggregator.assess([.valid, timeout, .valid, timeout], thresholdPercent: 50)
        #expect(result == Assessment(.online, reason: .validated))
        #expect(result.portalURL == nil)
    }

    @Test func quarterOfProbesMissesTheDefaultThreshold() {
        let result = Aggregator.assess([.valid, timeout, timeout, timeout], thresholdPercent: 50)
        #expect(result == Assessment(.limited, reason: .timeout))
    }

    @Test func defaultThresholdFromConfigurationIs50() {
        let threshold = Configuration().probingSettings(for: "eth0", kind: .ethernet, metered: false).successThresholdPercent
        #expect(threshold == 50)
        let result = Aggregator.assess([.valid, timeout, timeout], thresholdPercent: threshold)
        #expect(result.verdict == .limited)
    }

    @Test func hundredPercentNeedsEveryProbe() {
        #expect(Aggregator.assess([.valid, .valid, .valid, timeout], thresholdPercent: 100).verdict == .limited)
        #expect(Aggregator.assess([.valid, .valid, .valid, .valid], thresholdPercent: 100).verdict == .online)
    }

    @Test func onePercentNeedsOneProbeButNotZero() {
        #expect(Aggregator.assess([.valid, timeout, timeout, timeout], thresholdPercent: 1).verdict == .online)
        #expect(Aggregator.assess([timeout, timeout, timeout, timeout], thresholdPercent: 1).verdict == .limited)
    }

    @Test func captiveBeatsLimitedWhenAnyProbeSawAPortal() {
        let portal = ProbeClass.portal(reason: .redirect, portalURL: "http://portal.example/")
        let result = Aggregator.assess([timeout, timeout, portal, refused], thresholdPercent: 50)
        #expect(result == Assessment(.captive, reason: .redirect, portalURL: "http://portal.example/"))
    }

    @Test func captiveEvenWithSomeValidBelowThreshold() {
        let portal = ProbeClass.portal(reason: .bodyMismatch, portalURL: "http://p.example/")
        let result = Aggregator.assess([.valid, portal, portal, portal], thresholdPercent: 50)
        #expect(result.verdict == .captive)
    }

    @Test func onlineBeatsCaptiveAtThreshold() {
        let portal = ProbeClass.portal(reason: .redirect, portalURL: "http://p.example/")
        #expect(Aggregator.assess([.valid, portal], thresholdPercent: 50).verdict == .online)
    }

    @Test func firstPortalInProbeOrderNamesTheURL() {
        let first = ProbeClass.portal(reason: .networkAuthRequired, portalURL: "http://first.example/")
        let second = ProbeClass.portal(reason: .redirect, portalURL: "http://second.example/")
        let result = Aggregator.assess([timeout, first, second, second], thresholdPercent: 50)
        #expect(result == Assessment(.captive, reason: .networkAuthRequired, portalURL: "http://first.example/"))
    }

    @Test func limitedReasonIsTheMostFrequent() {
        let result = Aggregator.assess([timeout, dns, refused, dns, timeout, dns], thresholdPercent: 50)
        #expect(result == Assessment(.limited, reason: .dnsFailed))
    }

    @Test func limitedReasonTieGoesToFirstInProbeOrder() {
        #expect(Aggregator.assess([refused, timeout, timeout, refused], thresholdPercent: 50).reason == .refused)
        #expect(Aggregator.assess([timeout, refused, refused, timeout], thresholdPercent: 50).reason == .timeout)
        #expect(Aggregator.assess([.valid, dns, refused], thresholdPercent: 100).reason == .dnsFailed)
    }

    @Test func emptyRoundIsUnknown() {
        let result = Aggregator.assess([], thresholdPercent: 50)
        #expect(result.verdict == .unknown)
        #expect(result.reason == .noProbes)
    }

    @Test func bestOfFamiliesTakesTheBetterVerdict() {
        let v4 = Assessment(.limited, reason: .timeout)
        let v6 = Assessment(.online, reason: .validated)
        #expect(Aggregator.best(of: [.ipv4: v4, .ipv6: v6]) == v6)
        #expect(Aggregator.best(of: [.ipv4: v6, .ipv6: v4]) == v6)
        let down = Assessment(.down, reason: .noRoute)
        let captive = Assessment(.captive, reason: .redirect, portalURL: "http://p.example/")
        #expect(Aggregator.best(of: [.ipv4: down, .ipv6: captive]) == captive)
    }

    @Test func bestOfFamiliesPrefersIPv4OnTies() {
        let v4 = Assessment(.limited, reason: .timeout)
        let v6 = Assessment(.limited, reason: .refused)
        #expect(Aggregator.best(of: [.ipv4: v4, .ipv6: v6]) == v4)
        let p4 = Assessment(.captive, reason: .redirect, portalURL: "http://v4.example/")
        let p6 = Assessment(.captive, reason: .redirect, portalURL: "http://v6.example/")
        #expect(Aggregator.best(of: [.ipv6: p6, .ipv4: p4])?.portalURL == "http://v4.example/")
    }

    @Test func bestOfSingleOrNoFamily() {
        let v6 = Assessment(.captive, reason: .redirect, portalURL: "http://p.example/")
        #expect(Aggregator.best(of: [.ipv6: v6]) == v6)
        #expect(Aggregator.best(of: [:]) == nil)
    }
}
