import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Prometheus textfile")
struct PrometheusTextTests {
    private func state(primary: InterfaceName? = "eth0", stopped: Bool = false) -> AgentState {
        var eth0 = UplinkStatus(interface: "eth0", kind: .ethernet, verdict: .online, reason: .validated,
                                sinceWallSeconds: 1_700_000_000)
        eth0.quality = UplinkQualityStatus(
            figures: QualityFigures(roundTripMilliseconds: 12, roundTripVariationMilliseconds: 3, lossPercent: 5, attempts: 40),
            degraded: true, flapPenalty: 1_500, suppressed: true)
        let wwan0 = UplinkStatus(interface: "wwan0", kind: .wwan, verdict: .captive, reason: .redirect,
                                 sinceWallSeconds: 1_700_000_100, portalURL: "http://portal.example/login")
        return AgentState(primary: primary, uplinks: [eth0, wwan0], writtenWallSeconds: 1_700_000_200, pid: 42, stopped: stopped)
    }

    /// The lines of `text` for one metric name (the samples, not HELP or TYPE).
    private func samples(_ text: String, _ name: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix(name + "{") || $0.hasPrefix(name + " ") }
    }

    private func event(_ kind: HookEvent.Kind, _ interface: InterfaceName) -> HookEvent {
        HookEvent(kind: kind, interface: interface, interfaceKind: .ethernet, verdict: .online, previousVerdict: .down,
                  reason: .validated, portalURL: nil, primary: interface, previousPrimary: nil, wallSeconds: 1)
    }

    @Test func everyFamilyHasHelpAndTypeBeforeItsSamplesAndNamesFollowTheRules() {
        let text = PrometheusText.format(state(), counters: MetricCounters(), version: "1.2.3")
        var declared: [String: String] = [:]
        var sampled: Set<String> = []
        for line in text.split(separator: "\n").map(String.init) {
            let words = line.split(separator: " ").map(String.init)
            if line.hasPrefix("# HELP ") {
                #expect(words.count > 3, "HELP without text: \(line)")
            } else if line.hasPrefix("# TYPE ") {
                #expect(declared[words[2]] == nil, "declared twice: \(line)")
                declared[words[2]] = words[3]
            } else {
                let name = String(line.prefix { $0 != "{" && $0 != " " })
                #expect(declared[name] != nil, "sample before its TYPE: \(line)")
                sampled.insert(name)
            }
        }
        // A family's samples are together (the format wants them so) and no family is empty.
        #expect(Set(declared.keys) == sampled)
        for (name, type) in declared {
            #expect(name.hasPrefix("uplinkd_"))
            #expect(name.hasSuffix("_total") == (type == "counter"), "\(name) is a \(type)")
            #expect(!name.contains("milliseconds") && !name.contains("_ms") && !name.contains("percent"), "\(name): base units")
        }
        #expect(text.hasSuffix("\n"))
        #expect(samples(text, "uplinkd_info") == ["uplinkd_info{version=\"1.2.3\"} 1"])
    }

    @Test func oneVerdictSeriesPerVerdictValueWithOnlyTheCurrentOneSet() {
        let text = PrometheusText.format(state(), counters: MetricCounters())
        let eth0 = samples(text, "uplinkd_uplink_verdict").filter { $0.contains("interface=\"eth0\"") }
        #expect(eth0.count == Verdict.allCases.count)
        for verdict in Verdict.allCases {
            let value = verdict == .online ? "1" : "0"
            #expect(eth0.contains("uplinkd_uplink_verdict{interface=\"eth0\",kind=\"ethernet\",verdict=\"\(verdict.rawValue)\"} \(value)"))
        }
        #expect(samples(text, "uplinkd_uplink_verdict").filter { $0.hasSuffix(" 1") }.count == 2)
        #expect(samples(text, "uplinkd_uplink_verdict").contains(
            "uplinkd_uplink_verdict{interface=\"wwan0\",kind=\"wwan\",verdict=\"captive\"} 1"))
    }

    @Test func upPrimaryAndLastChangePerUplink() {
        let text = PrometheusText.format(state(), counters: MetricCounters())
        #expect(samples(text, "uplinkd_uplink_up") == [
            "uplinkd_uplink_up{interface=\"eth0\",kind=\"ethernet\"} 1",
            "uplinkd_uplink_up{interface=\"wwan0\",kind=\"wwan\"} 0",
        ])
        #expect(samples(text, "uplinkd_uplink_primary") == [
            "uplinkd_uplink_primary{interface=\"eth0\",kind=\"ethernet\"} 1",
            "uplinkd_uplink_primary{interface=\"wwan0\",kind=\"wwan\"} 0",
        ])
        #expect(samples(text, "uplinkd_uplink_last_change_timestamp_seconds") == [
            "uplinkd_uplink_last_change_timestamp_seconds{interface=\"eth0\",kind=\"ethernet\"} 1700000000",
            "uplinkd_uplink_last_change_timestamp_seconds{interface=\"wwan0\",kind=\"wwan\"} 1700000100",
        ])
        #expect(samples(text, "uplinkd_state_written_timestamp_seconds") == ["uplinkd_state_written_timestamp_seconds 1700000200"])
        let none = PrometheusText.format(state(primary: nil), counters: MetricCounters())
        #expect(samples(none, "uplinkd_uplink_primary").allSatisfy { $0.hasSuffix(" 0") })
    }

    @Test func runningSaysWhetherTheFileIsTheFinalOne() {
        #expect(samples(PrometheusText.format(state(), counters: MetricCounters()), "uplinkd_running") == ["uplinkd_running 1"])
        #expect(samples(PrometheusText.format(state(stopped: true), counters: MetricCounters()), "uplinkd_running")
                == ["uplinkd_running 0"])
    }

    @Test func qualityFiguresInBaseUnits() {
        let text = PrometheusText.format(state(), counters: MetricCounters())
        #expect(samples(text, "uplinkd_uplink_rtt_seconds") == ["uplinkd_uplink_rtt_seconds{interface=\"eth0\",kind=\"ethernet\"} 0.012"])
        #expect(samples(text, "uplinkd_uplink_rtt_variation_seconds")
                == ["uplinkd_uplink_rtt_variation_seconds{interface=\"eth0\",kind=\"ethernet\"} 0.003"])
        #expect(samples(text, "uplinkd_uplink_loss_ratio") == ["uplinkd_uplink_loss_ratio{interface=\"eth0\",kind=\"ethernet\"} 0.05"])
        #expect(samples(text, "uplinkd_uplink_degraded").first == "uplinkd_uplink_degraded{interface=\"eth0\",kind=\"ethernet\"} 1")
        #expect(samples(text, "uplinkd_uplink_flap_penalty").first == "uplinkd_uplink_flap_penalty{interface=\"eth0\",kind=\"ethernet\"} 1500")
        #expect(samples(text, "uplinkd_uplink_suppressed").first == "uplinkd_uplink_suppressed{interface=\"eth0\",kind=\"ethernet\"} 1")
    }

    @Test func noQualitySeriesWithoutFigures() {
        var bare = state()
        bare.uplinks[0].quality = UplinkQualityStatus()
        let text = PrometheusText.format(bare, counters: MetricCounters())
        for name in ["uplinkd_uplink_rtt_seconds", "uplinkd_uplink_rtt_variation_seconds", "uplinkd_uplink_loss_ratio"] {
            // Not even the HELP and TYPE lines: a family without samples is left out.
            #expect(!text.contains(name), "\(name) without figures")
        }
        #expect(samples(text, "uplinkd_uplink_degraded").count == 2)
    }

    @Test func noUplinksLeavesOutEveryPerUplinkFamily() {
        let empty = AgentState(primary: nil, uplinks: [], writtenWallSeconds: 5, pid: 1)
        let text = PrometheusText.format(empty, counters: MetricCounters())
        #expect(!text.contains("uplinkd_uplink_"))
        #expect(!text.contains("uplinkd_probe_bytes_total"))
        #expect(samples(text, "uplinkd_primary_changes_total") == ["uplinkd_primary_changes_total 0"])
    }

    @Test func countersComeFromTheHookEventsAndTheProbeTotals() {
        var counters = MetricCounters()
        counters.count([event(.verdict, "eth0"), event(.primary, "eth0")])
        counters.count([event(.verdict, "eth0"), event(.verdict, "wwan0"), event(.primary, "wwan0")])
        counters.count([event(.stop, "wwan0")])   // stopping changes nothing counted
        counters.probeBytes = ["eth0": 123_456]
        #expect(counters.verdictChanges == ["eth0": 2, "wwan0": 1])
        #expect(counters.primaryChanges == 2)
        let text = PrometheusText.format(state(), counters: counters)
        #expect(samples(text, "uplinkd_verdict_changes_total") == [
            "uplinkd_verdict_changes_total{interface=\"eth0\",kind=\"ethernet\"} 2",
            "uplinkd_verdict_changes_total{interface=\"wwan0\",kind=\"wwan\"} 1",
        ])
        #expect(samples(text, "uplinkd_primary_changes_total") == ["uplinkd_primary_changes_total 2"])
        // An uplink with no probe bytes yet still has its counter, at 0.
        #expect(samples(text, "uplinkd_probe_bytes_total") == [
            "uplinkd_probe_bytes_total{interface=\"eth0\",kind=\"ethernet\"} 123456",
            "uplinkd_probe_bytes_total{interface=\"wwan0\",kind=\"wwan\"} 0",
        ])
        #expect(text.contains("# TYPE uplinkd_probe_bytes_total counter\n"))
    }

    @Test func outageCountersComeFromTheJournalsClosedRecords() {
        let boot = "ab"
        func at(_ milliseconds: Int) -> JournalTime {
            JournalTime(wallSeconds: 1_700_000_000 + milliseconds / 1000, monotonicMilliseconds: milliseconds, bootID: boot, synced: true)
        }
        var counters = MetricCounters()
        counters.count([JournalRecord(kind: .uplink, interface: "eth0", start: at(0), end: at(1_500)),
                        JournalRecord(kind: .site, start: at(500), end: at(1_500))])
        counters.count([JournalRecord(kind: .uplink, interface: "eth0", start: at(10_000), end: at(10_250)),
                        JournalRecord(kind: .failover, start: at(10_000), end: at(10_000)),
                        JournalRecord(kind: .absent, start: at(20_000), end: at(80_000))])
        let text = PrometheusText.format(state(), counters: counters)
        #expect(samples(text, "uplinkd_outages_total") == [
            "uplinkd_outages_total{interface=\"eth0\",kind=\"ethernet\"} 2",
            "uplinkd_outages_total{interface=\"wwan0\",kind=\"wwan\"} 0",
        ])
        #expect(samples(text, "uplinkd_outage_seconds_total").first
                == "uplinkd_outage_seconds_total{interface=\"eth0\",kind=\"ethernet\"} 1.75")
        #expect(samples(text, "uplinkd_site_outages_total") == ["uplinkd_site_outages_total 1"])
        #expect(samples(text, "uplinkd_site_outage_seconds_total") == ["uplinkd_site_outage_seconds_total 1"])
    }

    @Test func labelValuesAreEscaped() {
        #expect(PrometheusText.escapeLabelValue(#"a\b"c"#) == #"a\\b\"c"#)
        #expect(PrometheusText.escapeLabelValue("line\nnext") == #"line\nnext"#)
        #expect(PrometheusText.escapeLabelValue("eth0") == "eth0")
        // Interface names may hold quotes and backslashes (the kernel allows them).
        let odd: InterfaceName = #"a"b\c"#
        let weird = AgentState(primary: nil, uplinks: [
            UplinkStatus(interface: odd, kind: .other, verdict: .down, reason: .noCarrier, sinceWallSeconds: 1),
        ], writtenWallSeconds: 2, pid: 1)
        let text = PrometheusText.format(weird, counters: MetricCounters(), version: "1\n\"2\"")
        #expect(text.contains(#"uplinkd_uplink_up{interface="a\"b\\c",kind="other"} 0"#))
        #expect(text.contains(#"uplinkd_info{version="1\n\"2\""} 1"#))
    }

    @Test func decimalsAreExact() {
        #expect(PrometheusText.decimal(12, scale: 3) == "0.012")
        #expect(PrometheusText.decimal(1_500, scale: 3) == "1.5")
        #expect(PrometheusText.decimal(2_000, scale: 3) == "2")
        #expect(PrometheusText.decimal(0, scale: 2) == "0")
        #expect(PrometheusText.decimal(100, scale: 2) == "1")
        #expect(PrometheusText.decimal(-5, scale: 2) == "-0.05")
    }

    @Test func probeByteTotalsNeverGoDownWhenTheDailyCountStartsAgain() throws {
        var settings: [InterfaceName: InterfaceSettings] = [:]
        settings["wwan0"] = withBudget(1_000_000)
        var core = AgentCore(configuration: configuration(policy(), interfaces: settings))
        let wwan0 = usableLink("wwan0", index: 3)
        var generation = 0
        for case .startRound(_, let g) in core.linksChanged(uplinks: [ObservedUplink(facts: wwan0, kind: .wwan)],
                                                             events: [], now: at(0)) { generation = g }
        _ = core.roundFinished(probeReport("wwan0", bytes: 1_500), generation: generation, now: at(10))
        #expect(core.probeBytesTotals["wwan0"] == 1_500)
        // A round in the next day's window: today's count starts again, the total does not.
        _ = core.roundFinished(probeReport("wwan0", bytes: 200), generation: generation, now: at(ByteBudget.dayMilliseconds + 20))
        #expect(core.state(now: at(ByteBudget.dayMilliseconds + 30), pid: 1).uplinks.first?.bytesToday == 200)
        #expect(core.probeBytesTotals["wwan0"] == 1_700)
    }

    private func probeReport(_ name: InterfaceName, bytes: Int) -> RoundReport {
        let assessment = Assessment(.online, reason: .validated)
        return RoundReport(interface: name, kind: .wwan, assessment: assessment, families: [.ipv4: assessment],
                           probes: [ProbeReport(name: "a", url: "http://x/", family: .ipv4, judgement: .valid,
                                                status: 204, elapsedMilliseconds: 1, bytes: bytes)],
                           elapsedMilliseconds: 1)
    }
}

@Suite("[export] configuration")
struct ExportConfigurationTests {
    @Test func unsetByDefault() throws {
        #expect(Configuration().export.prometheusTextfilePath == nil)
        #expect(try parse("[check]\ntimeout = 5s\n").export.prometheusTextfilePath == nil)
    }

    @Test func anAbsolutePromFileIsTaken() throws {
        let configuration = try parse("[export]\nprometheus-textfile = /var/lib/prometheus/node-exporter/uplinkd.prom\n")
        #expect(configuration.export.prometheusTextfilePath == "/var/lib/prometheus/node-exporter/uplinkd.prom")
    }

    @Test func badPathsAreRefusedWithTheirReason() {
        expectError("[export]\nprometheus-textfile = uplinkd.prom\n", line: 2, key: "prometheus-textfile", mentioning: "absolute path")
        expectError("[export]\nprometheus-textfile = /var/lib/../uplinkd.prom\n", line: 2, key: "prometheus-textfile", mentioning: "..")
        expectError("[export]\nprometheus-textfile = /var/lib/node-exporter/\n", line: 2, key: "prometheus-textfile",
                    mentioning: "not a directory")
        expectError("[export]\nprometheus-textfile = /var/lib/node-exporter/uplinkd.txt\n", line: 2, key: "prometheus-textfile",
                    mentioning: "ending in .prom")
        expectError("[export]\nprometheus-textfile = /var/lib/node-exporter/.prom\n", line: 2, key: "prometheus-textfile",
                    mentioning: "ending in .prom")
        expectError("[export]\ntextfile = /x.prom\n", line: 2, key: "textfile", mentioning: "expected: prometheus-textfile")
    }

    @Test func theUnknownSectionMessageNamesExport() {
        expectError("[exports]\n", line: 1, key: nil, mentioning: "[export]")
    }
}
