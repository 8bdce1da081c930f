import Testing
import UplinkCore
import UplinkTestSupport

@Suite("ByteBudget")
struct ByteBudgetTests {
    @Test func budgetStopsPeriodicProbesUntilTheNextDay() {
        var budget = ByteBudget(limitBytes: 1_000)
        budget.record(600, at: 0)
        do {
            let result = budget.allowsPeriodicProbe(at: 1)
            #expect(result)
        }
        budget.record(500, at: 2)
        do {
            let result = budget.allowsPeriodicProbe(at: 3)
            #expect(!result)
        }
        #expect(budget.isExhausted(at: 3))
        #expect(budget.totalBytes == 1_100)
        do {
            let result = budget.allowsPeriodicProbe(at: ByteBudget.dayMilliseconds)
            #expect(result)
        }
        #expect(budget.spentBytes == 0)
        #expect(budget.totalBytes == 1_100)
    }

    @Test func noLimitNeverStops() {
        var budget = ByteBudget(limitBytes: nil)
        budget.record(1 << 30, at: 0)
        do {
            let result = budget.allowsPeriodicProbe(at: 1)
            #expect(result)
        }
    }
}
