/// Lossy is not dead. A round that missed the quorum while some probe validated, or
/// connected and then ran out of time or was reset, went through a path that carries
/// packets, only not enough of them in the time given: it earns another look at the
/// configured ceilings before anything is decided, and what validated in either look
/// counts. A dead upstream shows no such life (nothing connects, nothing validates),
/// so a hard cut is still decided by its first round. Captive evidence and wrong
/// answers (a proxy's garbage, a refusal) are conclusive and never looked at twice.
package enum SecondLook {
    /// Looks after the first, at most: with 30 % loss each way a round at the
    /// ceilings misses the quorum about one time in ten, two in a row about one in a
    /// hundred, three almost never.
    package static let maximumLooks = 2

    /// Whether a failed round shows life.
    package static func showsLife(_ report: RoundReport) -> Bool {
        guard report.assessment.verdict == .limited else { return false }
        return report.probes.contains { probe in
            probe.judgement == .valid
                || (probe.connected && (probe.judgement.reason == .timeout || probe.judgement.reason == .reset))
        }
    }

    /// `later`, with each probe that failed there but validated in `earlier` counted as
    /// validated, and each family judged again. A family whose later verdict is
    /// `captive` keeps it: portal evidence outweighs an earlier success.
    package static func merged(_ earlier: RoundReport, _ later: RoundReport, thresholdPercent: Int) -> RoundReport {
        var result = later
        var probes: [ProbeReport] = []
        var families = later.families
        for family in AddressFamily.allCases {
            var familyProbes = later.probes.filter { $0.family == family }
            guard !familyProbes.isEmpty else { continue }
            if later.families[family]?.verdict != .captive {
                for index in familyProbes.indices where familyProbes[index].judgement != .valid {
                    if let earlierValid = earlier.probes.first(where: {
                        $0.family == family && $0.name == familyProbes[index].name && $0.judgement == .valid
                    }) {
                        familyProbes[index] = earlierValid
                    }
                }
                families[family] = Aggregator.assess(familyProbes.map(\.judgement), thresholdPercent: thresholdPercent)
            }
            probes += familyProbes
        }
        result.probes = probes
        result.lookedProbes = earlier.lookedProbes + later.lookedProbes
        result.looks = earlier.looks + later.looks
        result.families = families
        result.assessment = Aggregator.best(of: families) ?? later.assessment
        result.elapsedMilliseconds = earlier.elapsedMilliseconds + later.elapsedMilliseconds
        return result
    }
}
