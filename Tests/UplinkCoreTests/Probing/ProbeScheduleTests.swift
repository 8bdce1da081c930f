import Testing
import UplinkCore
import UplinkTestSupport

@Suite("ProbeSchedule: back-off")
struct ProbeScheduleTests {
    @Test func backOffDoublesUpToTheInterval() {
        let p = probing { $0.intervalMilliseconds = 10_000; $0.suspectIntervalMilliseconds = 1_000 }
        var schedule = ProbeSchedule(settings: p)
        schedule.probeNow(at: 0, settings: p)
        #expect(schedule.isDue(at: 0))
        var now = 0
        var gaps: [Int] = []
        for _ in 0..<6 {
            schedule.roundFinished(at: now, suspect: true, online: false, settings: p)
            let due = schedule.nextDueMilliseconds!
            gaps.append(due - now)
            now = due
        }
        #expect(gaps == [1_000, 2_000, 4_000, 8_000, 10_000, 10_000])
        schedule.roundFinished(at: now, suspect: false, online: true, settings: p)
        #expect(schedule.nextDueMilliseconds == now + 10_000)
        // Stable again: the next suspect phase starts over at the suspect interval.
        schedule.roundFinished(at: now, suspect: true, online: true, settings: p)
        #expect(schedule.nextDueMilliseconds == now + 1_000)
    }

    @Test func probeOnlyWhileNotOnline() {
        let p = probing { $0.probeWhenOnline = false }
        var schedule = ProbeSchedule(settings: p)
        schedule.roundFinished(at: 100, suspect: false, online: true, settings: p)
        #expect(schedule.nextDueMilliseconds == nil)
        schedule.roundFinished(at: 100, suspect: false, online: false, settings: p)
        #expect(schedule.nextDueMilliseconds == 100 + p.intervalMilliseconds)
    }
}
