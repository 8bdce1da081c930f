import Testing
import UplinkCore

/// Seconds since the epoch of a UTC date and time.
func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0) -> Int {
    CivilDate(year: year, month: month, day: day).daysSinceEpoch * 86_400 + hour * 3_600 + minute * 60
}

/// Central European time with its daylight saving: UTC+1, UTC+2 from the last Sunday of
/// March 01:00 UTC to the last Sunday of October 01:00 UTC.
let berlin = LocalTime { epochSeconds in
    let year = CivilDate(daysSinceEpoch: epochSeconds / 86_400).year
    func lastSunday(_ month: Int) -> Int {
        var day = CivilDate(year: year, month: month, day: CivilDate.daysIn(year: year, month: month)).daysSinceEpoch
        while CivilDate.weekday(ofDay: day) != 7 { day -= 1 }
        return day * 86_400 + 3_600
    }
    return epochSeconds >= lastSunday(3) && epochSeconds < lastSunday(10) ? 7_200 : 3_600
}

/// A zone whose clock jumps from 00:00 to 01:00 (UTC-4 to UTC-3) on 2025-09-07, as Chile's
/// does: that day has no midnight.
let midnightSkipped = LocalTime { $0 >= utc(2025, 9, 7, 4) ? -3 * 3_600 : -4 * 3_600 }

/// A zone whose clock goes back from 00:00 to 23:00 (UTC-3 to UTC-4) on 2025-04-06: the
/// last hour of 5 April is lived twice.
let midnightRepeated = LocalTime { $0 >= utc(2025, 4, 6, 3) ? -4 * 3_600 : -3 * 3_600 }

/// A zone whose clock goes back from 01:00 to 00:00 (UTC-3 to UTC-4) on 2025-04-06, as
/// Chile's did: the first hour of the 6th, midnight with it, is lived twice.
let midnightTwice = LocalTime { $0 >= utc(2025, 4, 6, 4) ? -4 * 3_600 : -3 * 3_600 }

private func monthly(_ day: Int) -> PlanSettings {
    PlanSettings(limitBytes: 5_000_000_000, period: .month, start: .dayOfMonth(day))
}

@Suite("Civil dates")
struct CivilDateTests {
    @Test func daysSinceTheEpochAndBack() {
        #expect(CivilDate(year: 1970, month: 1, day: 1).daysSinceEpoch == 0)
        #expect(CivilDate(year: 2000, month: 3, day: 1).daysSinceEpoch == 11_017)
        #expect(CivilDate(year: 2024, month: 2, day: 29).daysSinceEpoch == 19_782)
        #expect(CivilDate(year: 1969, month: 12, day: 31).daysSinceEpoch == -1)
        for day in stride(from: -800_000, through: 800_000, by: 997) {
            #expect(CivilDate(daysSinceEpoch: day).daysSinceEpoch == day)
        }
        // Every day of two years, leap day included, in order.
        var date = CivilDate(year: 2023, month: 1, day: 1)
        for day in CivilDate(year: 2023, month: 1, day: 1).daysSinceEpoch..<CivilDate(year: 2025, month: 1, day: 1).daysSinceEpoch {
            #expect(CivilDate(daysSinceEpoch: day) == date)
            date = date.day < CivilDate.daysIn(year: date.year, month: date.month)
                ? CivilDate(year: date.year, month: date.month, day: date.day + 1)
                : CivilDate(year: date.year, month: date.month, day: 1).addingMonths(1)
        }
    }

    @Test func leapYearsAndWeekdays() {
        #expect(CivilDate.isLeapYear(2024) && CivilDate.isLeapYear(2000) && !CivilDate.isLeapYear(1900) && !CivilDate.isLeapYear(2025))
        #expect(CivilDate.weekday(ofDay: 0) == 4)   // Thursday
        #expect(CivilDate.weekday(ofDay: CivilDate(year: 2025, month: 6, day: 16).daysSinceEpoch) == 1)   // a Monday
        #expect(CivilDate.weekday(ofDay: -1) == 3)
        #expect(CivilDate(year: 2025, month: 1, day: 31).addingMonths(1) == CivilDate(year: 2025, month: 2, day: 28))
        #expect(CivilDate(year: 2025, month: 1, day: 15).addingMonths(-1) == CivilDate(year: 2024, month: 12, day: 15))
    }

    @Test func localMidnightsAcrossDaylightSaving() {
        // Berlin: 30 March 2025 has 23 hours, 26 October 25.
        let spring = CivilDate(year: 2025, month: 3, day: 30).daysSinceEpoch
        #expect(berlin.midnight(ofDay: spring) == utc(2025, 3, 29, 23))
        #expect(berlin.midnight(ofDay: spring + 1) == utc(2025, 3, 30, 22))
        let autumn = CivilDate(year: 2025, month: 10, day: 26).daysSinceEpoch
        #expect(berlin.midnight(ofDay: autumn + 1) - berlin.midnight(ofDay: autumn) == 25 * 3_600)
        // 02:30 on 30 March does not exist: the clock jumps from 02:00 to 03:00.
        #expect(berlin.epochSeconds(ofLocal: spring * 86_400 + 9_000) == utc(2025, 3, 30, 1))
        // 02:30 on 26 October happens twice: the first one.
        #expect(berlin.epochSeconds(ofLocal: autumn * 86_400 + 9_000) == utc(2025, 10, 26, 0, 30))
        // A midnight skipped: the day begins at 01:00.
        #expect(midnightSkipped.midnight(ofDay: CivilDate(year: 2025, month: 9, day: 7).daysSinceEpoch) == utc(2025, 9, 7, 4))
    }
}

@Suite("Billing cycles")
struct BillingCycleTests {
    @Test func aMonthlyCycleRunsFromItsDayToTheSameDayNextMonth() {
        let plan = monthly(12)
        let now = utc(2025, 6, 20, 15)
        #expect(BillingCycle.start(containing: now, plan, zone: .utc) == utc(2025, 6, 12))
        #expect(BillingCycle.end(after: utc(2025, 6, 12), plan, zone: .utc) == utc(2025, 7, 12))
        // Before the 12th: the cycle that began in the previous month, over a year end.
        #expect(BillingCycle.start(containing: utc(2025, 1, 3), plan, zone: .utc) == utc(2024, 12, 12))
        #expect(BillingCycle.end(after: utc(2024, 12, 12), plan, zone: .utc) == utc(2025, 1, 12))
        // A start is in the cycle it starts; the second before belongs to the one before.
        #expect(BillingCycle.start(containing: utc(2025, 6, 12), plan, zone: .utc) == utc(2025, 6, 12))
        #expect(BillingCycle.start(containing: utc(2025, 6, 12) - 1, plan, zone: .utc) == utc(2025, 5, 12))
    }

    /// A cycle begun while the clock was a year ahead, the clock then set right: the
    /// count moves to the cycle of the right time instead of running for a year. An
    /// hour back changes nothing.
    @Test func aClockSetBackByMoreThanADayMovesTheCycleWithItsCount() {
        let plan = monthly(12)
        var ledger = PlanLedger(startingAt: utc(2026, 6, 20), plan, zone: .utc)
        ledger.used = ByteCounts(received: 700, transmitted: 300)
        #expect(ledger.refresh(plan, zone: .utc, nowWallSeconds: utc(2026, 6, 12) - 3_600).isEmpty)
        #expect(ledger.cycleStartWallSeconds == utc(2026, 6, 12))
        #expect(ledger.refresh(plan, zone: .utc, nowWallSeconds: utc(2025, 6, 20)).isEmpty)
        #expect(ledger.cycleStartWallSeconds == utc(2025, 6, 12) && ledger.cycleEndWallSeconds == utc(2025, 7, 12))
        #expect(ledger.used.total == 1_000)
        #expect(ledger.refresh(plan, zone: .utc, nowWallSeconds: utc(2025, 7, 12)) == [.newCycle])
        #expect(ledger.used.total == 0)
    }

    @Test func aStartDayBeyondAShortMonthIsItsLastDay() {
        let plan = monthly(31)
        #expect(BillingCycle.end(after: utc(2025, 1, 31), plan, zone: .utc) == utc(2025, 2, 28))
        #expect(BillingCycle.end(after: utc(2025, 2, 28), plan, zone: .utc) == utc(2025, 3, 31))
        #expect(BillingCycle.end(after: utc(2025, 3, 31), plan, zone: .utc) == utc(2025, 4, 30))
        #expect(BillingCycle.end(after: utc(2025, 4, 30), plan, zone: .utc) == utc(2025, 5, 31))
        #expect(BillingCycle.start(containing: utc(2025, 3, 15), plan, zone: .utc) == utc(2025, 2, 28))
        #expect(BillingCycle.start(containing: utc(2025, 12, 31, 12), plan, zone: .utc) == utc(2025, 12, 31))
    }

    @Test func the29thOfFebruary() {
        // A leap year's February has the 29th; other years' cycles "on the 29th" start
        // on the 28th and are back on the 29th in March.
        for day in [29, 30, 31] {
            #expect(BillingCycle.start(containing: utc(2024, 3, 10), monthly(day), zone: .utc) == utc(2024, 2, 29))
            #expect(BillingCycle.start(containing: utc(2025, 3, 10), monthly(day), zone: .utc) == utc(2025, 2, 28))
        }
        #expect(BillingCycle.end(after: utc(2024, 1, 29), monthly(29), zone: .utc) == utc(2024, 2, 29))
        #expect(BillingCycle.end(after: utc(2024, 2, 29), monthly(29), zone: .utc) == utc(2024, 3, 29))
        #expect(BillingCycle.end(after: utc(2025, 2, 28), monthly(29), zone: .utc) == utc(2025, 3, 29))
        #expect(BillingCycle.start(containing: utc(2024, 2, 29, 23, 59), monthly(1), zone: .utc) == utc(2024, 2, 1))
        #expect(BillingCycle.end(after: utc(2024, 2, 1), monthly(1), zone: .utc) == utc(2024, 3, 1))
    }

    @Test func weeklyAndDailyCycles() {
        let weekly = PlanSettings(limitBytes: 1_000_000, period: .week, start: .weekday(1))
        // Wednesday 18 June 2025: the week began on Monday the 16th.
        #expect(BillingCycle.start(containing: utc(2025, 6, 18, 9), weekly, zone: .utc) == utc(2025, 6, 16))
        #expect(BillingCycle.end(after: utc(2025, 6, 16), weekly, zone: .utc) == utc(2025, 6, 23))
        let sundays = PlanSettings(limitBytes: 1_000_000, period: .week, start: .weekday(7))
        #expect(BillingCycle.start(containing: utc(2025, 6, 18, 9), sundays, zone: .utc) == utc(2025, 6, 15))
        let daily = PlanSettings(limitBytes: 1_000_000, period: .day)
        #expect(BillingCycle.start(containing: utc(2025, 6, 18, 9), daily, zone: .utc) == utc(2025, 6, 18))
        #expect(BillingCycle.end(after: utc(2025, 6, 18, 9), daily, zone: .utc) == utc(2025, 6, 19))
    }

    @Test func cyclesTurnAtLocalMidnightOnDaylightSavingDays() {
        let daily = PlanSettings(limitBytes: 1_000_000, period: .day)
        let spring = BillingCycle.start(containing: utc(2025, 3, 30, 12), daily, zone: berlin)
        #expect(spring == utc(2025, 3, 29, 23))
        #expect(BillingCycle.end(after: spring, daily, zone: berlin) - spring == 23 * 3_600)
        let autumn = BillingCycle.start(containing: utc(2025, 10, 26, 12), daily, zone: berlin)
        #expect(BillingCycle.end(after: autumn, daily, zone: berlin) - autumn == 25 * 3_600)
        // A monthly cycle on the 1st of April begins at local midnight, in summer time.
        #expect(BillingCycle.start(containing: utc(2025, 4, 10), monthly(1), zone: berlin) == utc(2025, 3, 31, 22))
        #expect(BillingCycle.end(after: utc(2025, 3, 10), monthly(1), zone: berlin) == utc(2025, 3, 31, 22))
        // A day without midnight begins when its clock does, at 01:00.
        #expect(BillingCycle.start(containing: utc(2025, 9, 7, 12), daily, zone: midnightSkipped) == utc(2025, 9, 7, 4))
        #expect(BillingCycle.end(after: utc(2025, 9, 6, 12), daily, zone: midnightSkipped) == utc(2025, 9, 7, 4))
        // The clock goes back from 00:00 to 23:00: the 6th begins when its clock first
        // reads midnight, an hour later; the hour lived twice belongs to the 5th.
        #expect(BillingCycle.end(after: utc(2025, 4, 5, 12), daily, zone: midnightRepeated) == utc(2025, 4, 6, 4))
        #expect(BillingCycle.start(containing: utc(2025, 4, 6, 3, 30), daily, zone: midnightRepeated) == utc(2025, 4, 5, 3))
        // The clock goes back from 01:00 to 00:00: midnight is lived twice, the day
        // begins at the first.
        #expect(BillingCycle.end(after: utc(2025, 4, 5, 12), daily, zone: midnightTwice) == utc(2025, 4, 6, 3))
        #expect(BillingCycle.start(containing: utc(2025, 4, 6, 4, 30), daily, zone: midnightTwice) == utc(2025, 4, 6, 3))
    }

    /// Whatever the zone and the moment: a cycle contains the moment it is asked for,
    /// and the next begins where it ends.
    @Test(arguments: [("utc", LocalTime.utc), ("berlin", berlin), ("skipped", midnightSkipped),
                      ("repeated", midnightRepeated), ("twice", midnightTwice), ("fixed", LocalTime.fixed(offsetSeconds: 5 * 3_600 + 1_800))])
    func cyclesTileTime(zone: (String, LocalTime)) {
        let plans = [monthly(1), monthly(12), monthly(31), PlanSettings(limitBytes: 1, period: .week, start: .weekday(3)),
                     PlanSettings(limitBytes: 1, period: .day)]
        for plan in plans {
            var moment = utc(2024, 12, 20)
            while moment < utc(2026, 1, 10) {
                let start = BillingCycle.start(containing: moment, plan, zone: zone.1)
                let end = BillingCycle.end(after: start, plan, zone: zone.1)
                #expect(start <= moment && moment < end, "\(zone.0) \(plan.period) \(moment)")
                #expect(BillingCycle.start(containing: end, plan, zone: zone.1) == end, "\(zone.0) \(plan.period) \(end)")
                moment += 7_919 * 3
            }
        }
    }
}

@Suite("Plan settings")
struct PlanSettingsTests {
    @Test func keysAreParsedAndLayered() throws {
        let configuration = try ConfigurationParser(fileName: "t.conf").parse("""
            [kind wwan]
            plan-start = 12
            plan-warn = 95, 75
            [interface wwan0]
            plan = 5GB
            at-cap = down
            standby = cold
            standby-bearer = disconnected
            [interface wwan1]
            plan = 1.5GiB
            plan-period = week
            plan-start = sun
            [interface wwan2]
            plan = unlimited
            [agent]
            failback = never
            plan-file = /var/lib/uplinkd/site-plans
            plan-save-interval = 2m
            """)
        let wwan0 = configuration.probingSettings(for: InterfaceName("wwan0"), kind: .wwan, metered: true).metering
        #expect(wwan0.plan == PlanSettings(limitBytes: 5_000_000_000, period: .month, start: .dayOfMonth(12),
                                           warnPercents: [75, 95], atCap: .down))
        #expect(wwan0.standby == .cold && wwan0.standbyBearer == .disconnected)
        #expect(wwan0.primaryIntervalMilliseconds == 90_000)
        let wwan1 = configuration.probingSettings(for: InterfaceName("wwan1"), kind: .other, metered: true).metering
        #expect(wwan1.plan?.limitBytes == 1_610_612_736 && wwan1.plan?.period == .week && wwan1.plan?.startDay == 7)
        let wwan2 = configuration.probingSettings(for: InterfaceName("wwan2"), kind: .wwan, metered: true).metering
        #expect(wwan2.plan?.limitBytes == nil && wwan2.plan != nil)
        let eth0 = configuration.probingSettings(for: InterfaceName("eth0"), kind: .ethernet, metered: false).metering
        #expect(eth0.plan == nil && eth0.standby == .hot && eth0.primaryIntervalMilliseconds == nil)
        #expect(configuration.agent.failback == .never)
        #expect(configuration.agent.plans.path == "/var/lib/uplinkd/site-plans")
        #expect(configuration.agent.plans.saveIntervalMilliseconds == 120_000)
    }

    @Test func hotStandbyProbesAMeteredUplinkOnTheUnmeteredSchedule() throws {
        let configuration = try ConfigurationParser(fileName: "t.conf").parse("[interface wwan0]\nstandby = hot\n")
        let hot = configuration.probingSettings(for: InterfaceName("wwan0"), kind: .wwan, metered: true)
        let warm = configuration.probingSettings(for: InterfaceName("wwan1"), kind: .wwan, metered: true)
        #expect(hot.intervalMilliseconds == ProbingSettings.defaults(metered: false).intervalMilliseconds)
        #expect(warm.intervalMilliseconds == ProbingSettings.defaults(metered: true).intervalMilliseconds)
        #expect(hot.metering.standby == .hot && warm.metering.standby == .warm)
    }

    @Test func badValuesNameTheirKey() {
        let cases: [(String, String, String)] = [
            ("[interface wwan0]\nplan = 5 gigs\n", "plan", "data volume"),
            ("[interface wwan0]\nplan = 500\n", "plan", "data volume"),
            ("[interface wwan0]\nplan-period = year\n", "plan-period", "month, week or day"),
            ("[interface wwan0]\nplan-start = 32\n", "plan-start", "day of the month"),
            ("[interface wwan0]\nplan-warn = 75, 100\n", "plan-warn", "from 1 to 99"),
            ("[interface wwan0]\nat-cap = stop\n", "at-cap", "last-resort, down or keep"),
            ("[kind wwan]\nstandby = frozen\n", "standby", "hot, warm or cold"),
            ("[kind wwan]\nstandby-bearer = off\n", "standby-bearer", "connected or disconnected"),
            ("[agent]\nfailback = later\n", "failback", "immediate, delayed or never"),
            ("[agent]\nplan-file = plans\n", "plan-file", "absolute"),
            ("[kind wwan]\nplan-period = week\n[interface wwan0]\nplan = 1GB\nplan-start = 12\n", "plan-start", "plan-period is week"),
            ("[interface wwan0]\nplan = 1GB\nplan-start = friday\n", "plan-start", "plan-period is month"),
        ]
        for (text, key, message) in cases {
            do throws(ConfigurationError) {
                _ = try ConfigurationParser(fileName: "t.conf").parse(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.key == key, "\(text): \(error)")
                #expect(error.message.contains(message), "\(text): \(error.message)")
                #expect(error.line != nil, "\(text): no line")
            }
        }
    }

    @Test func dataVolumes() throws {
        #expect(try ValueParser.dataSize("5GB", range: 1...Int.max) == 5_000_000_000)
        #expect(try ValueParser.dataSize("2GiB", range: 1...Int.max) == 2_147_483_648)
        #expect(try ValueParser.dataSize("500 MB", range: 1...Int.max) == 500_000_000)
        #expect(try ValueParser.dataSize("1.25TB", range: 1...Int.max) == 1_250_000_000_000)
        #expect(try ValueParser.dataSize("4096", range: 1...Int.max) == 4_096)
        for bad in ["", "GB", "-1GB", "1.GB", "1.2.3GB", "1e9", "0x10"] {
            #expect(throws: ValueError.self, "\(bad)") { try ValueParser.dataSize(bad, range: 1...Int.max) }
        }
    }

    @Test func percentages() {
        let plan = PlanSettings(limitBytes: 2_000)
        #expect(plan.percent(of: 1_499) == 74 && plan.percent(of: 1_500) == 75 && plan.percent(of: 2_000) == 100)
        #expect(plan.marks == [75, 95, 100])
        #expect(PlanSettings(limitBytes: nil).marks.isEmpty && PlanSettings(limitBytes: nil).percent(of: 5) == nil)
        #expect(PlanSettings(limitBytes: 1_000_000_000_000_000).percent(of: 999_999_999_999_999_999) == 99_999)
    }
}
