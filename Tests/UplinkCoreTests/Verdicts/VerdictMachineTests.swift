import Testing
import UplinkCore
import UplinkTestSupport

@Suite("VerdictMachine: hysteresis")
struct VerdictMachineTests {
    @Test func firstRoundDecidesAtOnce() {
        var machine = VerdictMachine(now: at(0))
        #expect(machine.verdict == .unknown)
        do {
            let result = machine.roundFinished(limited, families: [:], settings: probing(), now: at(10))
            #expect(result)
        }
        #expect(machine.verdict == .limited)
        #expect(machine.since == at(10))
    }

    @Test func leavingOnlineNeedsConsecutiveFailures() {
        var machine = VerdictMachine(now: at(0))
        _ = machine.roundFinished(online, families: [:], settings: probing(), now: at(1))
        do {
            let result = machine.roundFinished(limited, families: [:], settings: probing(), now: at(2))
            #expect(!result)
        }
        #expect(machine.verdict == .online)
        #expect(machine.isSuspect)
        // A success in between resets the count.
        do {
            let result = machine.roundFinished(online, families: [:], settings: probing(), now: at(3))
            #expect(!result)
        }
        #expect(!machine.isSuspect)
        do {
            let result = machine.roundFinished(limited, families: [:], settings: probing(), now: at(4))
            #expect(!result)
        }
        do {
            let result = machine.roundFinished(captive, families: [:], settings: probing(), now: at(5))
            #expect(result)
        }
        #expect(machine.assessment == captive)
        #expect(machine.since == at(5))
    }

    @Test func returningOnlineNeedsConsecutiveSuccesses() {
        var machine = VerdictMachine(now: at(0))
        _ = machine.roundFinished(limited, families: [:], settings: probing(), now: at(1))
        do {
            let result = machine.roundFinished(online, families: [:], settings: probing(), now: at(2))
            #expect(!result)
        }
        #expect(machine.verdict == .limited)
        do {
            let result = machine.roundFinished(online, families: [:], settings: probing(), now: at(3))
            #expect(result)
        }
        #expect(machine.verdict == .online)
    }

    @Test func thresholdsOfOneActImmediately() {
        let eager = probing { $0.failuresToLeaveOnline = 1; $0.successesToReturnOnline = 1 }
        var machine = VerdictMachine(now: at(0))
        _ = machine.roundFinished(online, families: [:], settings: eager, now: at(1))
        do {
            let result = machine.roundFinished(limited, families: [:], settings: eager, now: at(2))
            #expect(result)
        }
        do {
            let result = machine.roundFinished(online, families: [:], settings: eager, now: at(3))
            #expect(result)
        }
    }

    @Test func captiveAndLimitedSwitchWithoutHysteresis() {
        var machine = VerdictMachine(now: at(0))
        _ = machine.roundFinished(limited, families: [:], settings: probing(), now: at(1))
        do {
            let result = machine.roundFinished(captive, families: [:], settings: probing(), now: at(2))
            #expect(result)
        }
        #expect(machine.verdict == .captive)
    }

    @Test func carrierLossIsDownAtOnceAndNextRoundDecides() {
        var machine = VerdictMachine(now: at(0))
        _ = machine.roundFinished(online, families: [:], settings: probing(), now: at(1))
        do {
            let result = machine.linkChanged(.down(reason: .noCarrier), now: at(2))
            #expect(result)
        }
        #expect(machine.assessment == Assessment(.down, reason: .noCarrier))
        do {
            let result = machine.linkChanged(.probe([.ipv4]), now: at(3))
            #expect(!result)
        }
        #expect(machine.verdict == .down)
        // Back from down: no hysteresis, the first round decides.
        do {
            let result = machine.roundFinished(online, families: [.ipv4: online], settings: probing(), now: at(4))
            #expect(result)
        }
        #expect(machine.verdict == .online)
        #expect(machine.families[.ipv4] == online)
    }

    @Test func sameVerdictKeepsSinceButRefreshesReason() {
        var machine = VerdictMachine(now: at(0))
        _ = machine.roundFinished(limited, families: [:], settings: probing(), now: at(1))
        let refused = Assessment(.limited, reason: .refused)
        do {
            let result = machine.roundFinished(refused, families: [:], settings: probing(), now: at(9))
            #expect(!result)
        }
        #expect(machine.assessment == refused)
        #expect(machine.since == at(1))
    }
}
