/// A duration as an operator reads it in a log line or a table: "4.2 s", "3 min 5 s",
/// "2 h 10 min", "3 d 4 h" (the two largest units, rounded down).
package enum DurationWords {
    package static func text(milliseconds: Int) -> String {
        let seconds = milliseconds / 1000
        if seconds >= 86_400 { return "\(seconds / 86_400) d \(seconds % 86_400 / 3_600) h" }
        if seconds >= 3_600 { return "\(seconds / 3_600) h \(seconds % 3_600 / 60) min" }
        if seconds >= 60 { return "\(seconds / 60) min \(seconds % 60) s" }
        return "\(PrometheusText.decimal(milliseconds / 100, scale: 1)) s"
    }
}
