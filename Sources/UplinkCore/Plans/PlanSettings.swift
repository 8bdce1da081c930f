/// How long a billing cycle runs (`plan-period`).
package enum PlanPeriod: String, Sendable, CaseIterable {
    case month
    case week
    case day
}

/// What happens to an uplink whose data plan is used up (`at-cap`).
package enum AtCap: String, Sendable, CaseIterable {
    /// It may still become primary, but only when no other uplink is online, and it
    /// hands over at once (no hold-down) as soon as one is.
    case lastResort = "last-resort"
    /// Never primary again until the next cycle.
    case down
    /// Nothing changes: the operator pays for what goes over.
    case keep
}

/// An uplink's data plan (`plan`, `plan-period`, `plan-start`, `plan-warn`, `at-cap`):
/// every byte it carries each way is counted per billing cycle, hooks hear of each
/// warning mark and of the cap, and the cap changes what it may be used for.
package struct PlanSettings: Sendable, Equatable {
    /// Bytes a cycle allows; nil: count without a limit (`plan = unlimited`).
    package var limitBytes: Int?
    package var period: PlanPeriod
    /// `plan-start`: the day of the month a monthly cycle starts on (a month without
    /// that day starts it on its last day), or the weekday a weekly one does; nil: the
    /// 1st, or Monday. Unused for daily cycles.
    package var start: PlanStartDay?
    /// Percentages of the limit at which hooks are told (`plan` events), each once a
    /// cycle, ascending. 100 (the cap) is always told when there is a limit.
    package var warnPercents: [Int]
    package var atCap: AtCap

    package init(limitBytes: Int?, period: PlanPeriod = .month, start: PlanStartDay? = nil, warnPercents: [Int] = [75, 95],
                atCap: AtCap = .lastResort) {
        self.limitBytes = limitBytes
        self.period = period
        self.start = start
        self.warnPercents = warnPercents
        self.atCap = atCap
    }

    /// The day of the month (monthly cycles) or ISO weekday (weekly: 1 Monday to 7
    /// Sunday) cycles start on. A start of the other kind (which the parser refuses)
    /// gives the default.
    package var startDay: Int {
        switch (period, start) {
        case (.month, .dayOfMonth(let day)?): return day
        case (.week, .weekday(let weekday)?): return weekday
        default: return 1
        }
    }

    /// The marks hooks hear of: the warnings, then the cap.
    package var marks: [Int] {
        guard limitBytes != nil else { return [] }
        return warnPercents.filter { $0 < 100 } + [100]
    }

    /// The whole percentage of the limit `usedBytes` is (rounded down, so 100 means the
    /// cap is reached); nil without a limit.
    package func percent(of usedBytes: Int) -> Int? {
        guard let limitBytes, limitBytes > 0 else { return nil }
        // In two steps: a limit is at most a petabyte, so neither can overflow.
        return usedBytes / limitBytes * 100 + usedBytes % limitBytes * 100 / limitBytes
    }
}

/// Where billing cycles begin, in the gateway's local time (`LocalTime`): local
/// midnight of the start day. The cycle a moment falls in runs from the latest start
/// at or before it to the first start after it; a cycle begun by hand (`uplinkd plan
/// --reset`) runs from that moment to the next regular start.
package enum BillingCycle {
    /// The latest start at or before `epochSeconds`.
    package static func start(containing epochSeconds: Int, _ settings: PlanSettings, zone: LocalTime) -> Int {
        var candidate = startDay(onOrBefore: zone.day(at: epochSeconds), settings)
        // The clock's day and the starts disagree only around a transition at
        // midnight: a midnight skipped (the start before applies), or one repeated when
        // the clock goes back across it (the moment is after the first midnight, while
        // the clock reads the day before again): `start` must agree with `end`.
        while zone.midnight(ofDay: candidate) > epochSeconds {
            candidate = startDay(onOrBefore: candidate - 1, settings)
        }
        while true {
            let next = startDay(onOrAfter: candidate + 1, settings)
            guard zone.midnight(ofDay: next) <= epochSeconds else { break }
            candidate = next
        }
        return zone.midnight(ofDay: candidate)
    }

    /// The first regular start after `epochSeconds`: where the cycle running then ends.
    package static func end(after epochSeconds: Int, _ settings: PlanSettings, zone: LocalTime) -> Int {
        var candidate = startDay(onOrAfter: zone.day(at: epochSeconds), settings)
        while zone.midnight(ofDay: candidate) <= epochSeconds {
            candidate = startDay(onOrAfter: candidate + 1, settings)
        }
        return zone.midnight(ofDay: candidate)
    }

    /// The latest local day on or before `day` on which a cycle starts.
    static func startDay(onOrBefore day: Int, _ settings: PlanSettings) -> Int {
        switch settings.period {
        case .day:
            return day
        case .week:
            let back = (CivilDate.weekday(ofDay: day) - settings.startDay + 7) % 7
            return day - back
        case .month:
            let date = CivilDate(daysSinceEpoch: day)
            let thisMonth = monthStart(year: date.year, month: date.month, settings)
            if thisMonth <= day { return thisMonth }
            let previous = date.addingMonths(-1)
            return monthStart(year: previous.year, month: previous.month, settings)
        }
    }

    /// The first local day on or after `day` on which a cycle starts.
    static func startDay(onOrAfter day: Int, _ settings: PlanSettings) -> Int {
        switch settings.period {
        case .day:
            return day
        case .week:
            let ahead = (settings.startDay - CivilDate.weekday(ofDay: day) + 7) % 7
            return day + ahead
        case .month:
            let date = CivilDate(daysSinceEpoch: day)
            let thisMonth = monthStart(year: date.year, month: date.month, settings)
            if thisMonth >= day { return thisMonth }
            let next = CivilDate(year: date.year, month: date.month, day: 1).addingMonths(1)
            return monthStart(year: next.year, month: next.month, settings)
        }
    }

    /// The start day of a month's cycle: the configured day, or the month's last day
    /// when it has no such day (a cycle "on the 31st" starts on 30 April and on
    /// 28 or 29 February).
    static func monthStart(year: Int, month: Int, _ settings: PlanSettings) -> Int {
        CivilDate(year: year, month: month, day: min(settings.startDay, CivilDate.daysIn(year: year, month: month)))
            .daysSinceEpoch
    }
}
