/// Turns one round of probe judgements into a verdict.
package enum Aggregator {
    /// `online` when the share of valid probes reaches `thresholdPercent`; else `captive`
    /// when any probe saw a portal (the first one in probe order names it); else
    /// `limited` with the most frequent failure reason (ties: first in probe order).
    package static func assess(_ classes: [ProbeClass], thresholdPercent: Int) -> Assessment {
        guard !classes.isEmpty else { return Assessment(.unknown, reason: .noProbes) }
        let successes = classes.filter { $0 == .valid }.count
        if successes > 0 && successes * 100 >= thresholdPercent * classes.count {
            return Assessment(.online, reason: .validated)
        }
        for probeClass in classes {
            if case .portal(let reason, let url) = probeClass {
                return Assessment(.captive, reason: reason, portalURL: url)
            }
        }
        var counts: [Reason: Int] = [:]
        var order: [Reason] = []
        for probeClass in classes {
            guard case .broken(let reason) = probeClass else { continue }
            if counts[reason] == nil { order.append(reason) }
            counts[reason, default: 0] += 1
        }
        // Valid probes below the threshold and no failure reason: too few validated.
        guard let first = order.first else { return Assessment(.limited, reason: .belowThreshold) }
        let best = order.reduce(first) { counts[$1]! > counts[$0]! ? $1 : $0 }
        return Assessment(.limited, reason: best)
    }

    /// The uplink's verdict is the best of its families.
    package static func best(of families: [AddressFamily: Assessment]) -> Assessment? {
        // Deterministic tie-break: IPv4 before IPv6 when both give the same verdict.
        var best: Assessment?
        for family in AddressFamily.allCases {
            guard let assessment = families[family] else { continue }
            if best == nil || assessment.verdict > best!.verdict { best = assessment }
        }
        return best
    }
}
