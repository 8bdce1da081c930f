/// A calendar date in the proleptic Gregorian calendar, and the arithmetic data plans
/// need: days since 1970-01-01, days in a month, the weekday. No Foundation: the core
/// stays small and pure, and these few formulas are all a billing cycle asks for.
package struct CivilDate: Sendable, Equatable, Comparable, CustomStringConvertible {
    package var year: Int
    /// 1 to 12.
    package var month: Int
    /// 1 to the month's length.
    package var day: Int

    package init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    package static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    package static func daysIn(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 (negative before). Counts in 400-year eras of 146,097
    /// days, with the year taken to start in March so the leap day ends it.
    package var daysSinceEpoch: Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` days after 1970-01-01.
    package init(daysSinceEpoch days: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// ISO weekday of a day number: 1 Monday to 7 Sunday (1970-01-01 was a Thursday).
    package static func weekday(ofDay days: Int) -> Int {
        let sinceMonday = (days + 3) % 7
        return (sinceMonday < 0 ? sinceMonday + 7 : sinceMonday) + 1
    }

    /// The same day of another month `months` away, the day cut to that month's length.
    package func addingMonths(_ months: Int) -> CivilDate {
        let index = year * 12 + (month - 1) + months
        let newYear = index >= 0 ? index / 12 : (index - 11) / 12
        let newMonth = index - newYear * 12 + 1
        return CivilDate(year: newYear, month: newMonth, day: min(day, CivilDate.daysIn(year: newYear, month: newMonth)))
    }

    package static func < (a: CivilDate, b: CivilDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    package var description: String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))"
    }
}

/// The local time of the gateway as a function: its offset from UTC at each moment
/// (seconds east of Greenwich, daylight saving included). The runtime builds it from
/// the system's time zone (localtime_r: TZ, /etc/localtime); tests give rules of
/// their own. Billing cycles turn at local midnight, so the core needs no zone data.
package struct LocalTime: Sendable {
    /// The UTC offset in force at a moment (seconds since the epoch).
    package let offsetSeconds: @Sendable (Int) -> Int

    package init(offsetSeconds: @escaping @Sendable (Int) -> Int) {
        self.offsetSeconds = offsetSeconds
    }

    /// Coordinated universal time, and a fixed offset.
    package static let utc = LocalTime { _ in 0 }
    package static func fixed(offsetSeconds: Int) -> LocalTime { LocalTime { _ in offsetSeconds } }

    /// The local wall clock at a moment, in seconds since local 1970-01-01 00:00.
    package func localSeconds(at epochSeconds: Int) -> Int {
        epochSeconds + offsetSeconds(epochSeconds)
    }

    /// The local day (days since 1970-01-01) a moment falls on.
    package func day(at epochSeconds: Int) -> Int {
        let local = localSeconds(at: epochSeconds)
        return local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
    }

    /// The first moment whose local clock reads `localSeconds` or later. A time that
    /// occurs twice (the hour repeated when summer time ends) gives its first
    /// occurrence; a time skipped (the hour lost when it begins, midnight in some
    /// zones) gives the moment the clock jumps past it.
    package func epochSeconds(ofLocal local: Int) -> Int {
        // Offsets of the day before and after bracket any transition near `local`.
        let candidates = Set([local - offsetSeconds(local - 86_400), local - offsetSeconds(local),
                              local - offsetSeconds(local + 86_400)]).sorted()
        guard let first = candidates.first(where: { localSeconds(at: $0) >= local }) else {
            return candidates.last!
        }
        guard localSeconds(at: first) > local else { return first }
        // Skipped: the clock read less than `local` some time before and more just
        // after; the jump is the first moment at or past it (a transition moves the
        // clock by at most a few hours, and within that span the clock only rises).
        var low = first - 4 * 3_600
        var high = first
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if localSeconds(at: middle) >= local { high = middle } else { low = middle }
        }
        return high
    }

    /// The moment local midnight begins day `day`.
    package func midnight(ofDay day: Int) -> Int {
        epochSeconds(ofLocal: day * 86_400)
    }
}
