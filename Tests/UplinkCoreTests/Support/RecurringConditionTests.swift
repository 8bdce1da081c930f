import Testing
import UplinkCore

@Suite("A recurring condition's log lines")
struct RecurringConditionTests {
    /// No system bus for a day, tried again every minute: the first try is told, one
    /// reminder an hour counts the tries since, and the end is told once.
    @Test func aDayOfRetriesIsTwentyFiveLinesAndAnEnd() {
        var condition = RecurringCondition()
        var told: [RecurringCondition.Telling] = []
        for minute in 0..<(24 * 60) {
            let telling = condition.occurred(now: minute * 60_000)
            if telling != .nothing { told.append(telling) }
        }
        #expect(told.first == .began)
        #expect(told.count == 24)
        #expect(told[1] == .stillThere(lastedMilliseconds: 3_600_000, occurrencesSinceTold: 60))
        #expect(condition.cleared(now: 86_400_000) == .ended(lastedMilliseconds: 86_400_000, occurrences: 1_440))
        #expect(!condition.isPresent)
        // Over and cleared again: nothing more to say.
        #expect(condition.cleared(now: 86_500_000) == .nothing)
    }

    @Test func aConditionThatComesBackAfterItsEndBeginsAgain() {
        var condition = RecurringCondition()
        #expect(condition.occurred(now: 0) == .began)
        #expect(condition.occurred(now: 1_000) == .nothing)
        #expect(condition.cleared(now: 2_000) == .ended(lastedMilliseconds: 2_000, occurrences: 2))
        #expect(condition.occurred(now: 3_000) == .began)
        #expect(condition.isPresent)
    }

    @Test func theReminderWaitsAFullHourAfterTheLastLine() {
        var condition = RecurringCondition()
        _ = condition.occurred(now: 0)
        #expect(condition.occurred(now: RecurringCondition.reminderIntervalMilliseconds - 1) == .nothing)
        #expect(condition.occurred(now: RecurringCondition.reminderIntervalMilliseconds)
                == .stillThere(lastedMilliseconds: RecurringCondition.reminderIntervalMilliseconds, occurrencesSinceTold: 2))
        #expect(condition.occurred(now: RecurringCondition.reminderIntervalMilliseconds + 10) == .nothing)
    }

    @Test func durationsInWords() {
        #expect(DurationWords.text(milliseconds: 4_250) == "4.2 s")
        #expect(DurationWords.text(milliseconds: 185_000) == "3 min 5 s")
        #expect(DurationWords.text(milliseconds: 7_800_000) == "2 h 10 min")
        #expect(DurationWords.text(milliseconds: 273_600_000) == "3 d 4 h")
    }
}
