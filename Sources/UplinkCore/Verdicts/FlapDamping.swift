/// How flapping uplinks are damped (`[agent]` `flap-*` keys). The defaults let one
/// flap pass with the plain hold-down, and keep an uplink that flapped twice within a
/// few minutes from becoming primary for about five to seven minutes; every further
/// flap while suppressed adds to that, up to `maximumSuppressMilliseconds`.
package struct DampingSettings: Sendable, Equatable {
    /// Added each time an uplink leaves `online`; 0 turns damping off.
    package var penaltyPerFlap = 1_000
    package var halfLifeMilliseconds = 300_000
    /// At or above this the uplink is suppressed...
    package var suppressLimit = 1_500
    /// ...until its penalty has decayed to this.
    package var reuseLimit = 750
    /// No uplink stays suppressed longer than this after its last flap.
    package var maximumSuppressMilliseconds = 1_800_000

    package init() {}

    /// The penalty that decays to the reuse limit in the maximum suppress time.
    var ceiling: Double {
        Double(reuseLimit) / FlapDamping.remaining(afterMilliseconds: maximumSuppressMilliseconds,
                                                   halfLifeMilliseconds: halfLifeMilliseconds)
    }
}

/// Route-flap damping for one uplink, the scheme BGP routers use for flapping routes
/// (RFC 2439): each time the uplink leaves `online` its penalty grows, the penalty
/// halves every half-life, and from the suppress limit on the uplink may not become
/// primary until the penalty has decayed to the reuse limit. Leaving the primary
/// role is never damped: a failing uplink is left at once.
package struct FlapDamping: Sendable, Equatable {
    private var penaltyAtUpdate: Double = 0
    private var updatedMilliseconds = 0
    package private(set) var suppressed = false
    /// When suppression last ended (a hold-down runs from then).
    package private(set) var releasedMilliseconds: Int?

    package init() {}

    package func penalty(at now: Int, settings: DampingSettings) -> Double {
        penaltyAtUpdate * FlapDamping.remaining(afterMilliseconds: now - updatedMilliseconds,
                                                halfLifeMilliseconds: settings.halfLifeMilliseconds)
    }

    /// The uplink left `online`. Returns true when this flap suppressed it.
    package mutating func flapped(at now: Int, settings: DampingSettings) -> Bool {
        guard settings.penaltyPerFlap > 0 else { return false }
        penaltyAtUpdate = min(settings.ceiling, penalty(at: now, settings: settings) + Double(settings.penaltyPerFlap))
        updatedMilliseconds = now
        guard !suppressed, penaltyAtUpdate >= Double(settings.suppressLimit) else { return false }
        suppressed = true
        return true
    }

    /// Time passed. Returns true when suppression ended.
    package mutating func update(at now: Int, settings: DampingSettings) -> Bool {
        guard suppressed else { return false }
        // The time bound holds even when a reload lowered it below what the penalty
        // needs, so the release time is never in the past while suppressed.
        guard settings.penaltyPerFlap > 0, penalty(at: now, settings: settings) > Double(settings.reuseLimit),
              now - updatedMilliseconds < settings.maximumSuppressMilliseconds else {
            suppressed = false
            releasedMilliseconds = now
            return true
        }
        return false
    }

    /// When suppression will end if no flap comes first (to wake up then).
    package func releaseMilliseconds(settings: DampingSettings) -> Int? {
        guard suppressed else { return nil }
        // The penalty only falls: bisect for the first millisecond at the reuse limit.
        var low = updatedMilliseconds, high = updatedMilliseconds + settings.maximumSuppressMilliseconds
        while low < high {
            let middle = low + (high - low) / 2
            if penalty(at: middle, settings: settings) <= Double(settings.reuseLimit) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// 2^(-t / halfLife): what remains of a penalty after `t`. Computed here because
    /// the core uses no C maths library: whole half-lives by halving, the rest from
    /// the exponential series (for an exponent in [0, 1) ten terms are exact to 1e-9).
    static func remaining(afterMilliseconds elapsed: Int, halfLifeMilliseconds: Int) -> Double {
        guard elapsed > 0 else { return 1 }
        guard halfLifeMilliseconds > 0 else { return 0 }
        let halvings = Double(elapsed) / Double(halfLifeMilliseconds)
        guard halvings < 1_000 else { return 0 }
        let whole = halvings.rounded(.down)
        let x = -(halvings - whole) * 0.693_147_180_559_945_3
        var term = 1.0, sum = 1.0
        for n in 1...12 {
            term *= x / Double(n)
            sum += term
        }
        var result = sum
        for _ in 0..<Int(whole) { result *= 0.5 }
        return result
    }
}
