import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Verdict and exit status")
struct VerdictTests {
    @Test func orderedWorstToBest() {
        #expect(Verdict.unknown < .down)
        #expect(Verdict.down < .limited)
        #expect(Verdict.limited < .captive)
        #expect(Verdict.captive < .online)
        #expect(!(Verdict.online < .online))
        #expect(Verdict.allCases.sorted() == [.unknown, .down, .limited, .captive, .online])
        #expect([Verdict.limited, .online, .down].max() == .online)
        #expect([Verdict.limited, .captive, .down].max() == .captive)
    }

    @Test func exitStatuses() {
        #expect(Verdict.online.exitStatus == 0)
        #expect(Verdict.captive.exitStatus == 1)
        #expect(Verdict.limited.exitStatus == 2)
        #expect(Verdict.down.exitStatus == 3)
        #expect(Verdict.unknown.exitStatus == 3)
    }

    @Test func rawValuesAreTheContract() {
        #expect(Verdict.allCases.map(\.rawValue) == ["unknown", "down", "limited", "captive", "online"])
        #expect(InterfaceKind.allCases.map(\.rawValue) == ["ethernet", "wifi", "wwan", "other"])
    }
}
