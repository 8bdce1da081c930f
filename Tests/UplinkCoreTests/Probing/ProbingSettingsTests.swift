import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Probing settings per uplink and kind")
struct ProbingSettingsTests {
    @Test func classDefaultsDifferForMeteredUplinks() {
        let configuration = Configuration()
        let ethernet = configuration.probingSettings(for: "eth0", kind: .ethernet, metered: false)
        let cellular = configuration.probingSettings(for: "wwan0", kind: .wwan, metered: true)
        #expect(ethernet.intervalMilliseconds == 30_000)
        #expect(ethernet.livenessIntervalMilliseconds == 4_000)
        #expect(cellular.intervalMilliseconds == 1_200_000)
        #expect(cellular.livenessIntervalMilliseconds == nil)
        #expect(ethernet.failuresToLeaveOnline == 1)
        #expect(ethernet.stallWindowMilliseconds == 1_500)
        #expect(ethernet.timeoutMilliseconds == cellular.timeoutMilliseconds)
    }

    @Test func interfaceBeatsKindBeatsAgentBeatsDefaults() throws {
        let configuration = try parse("""
            [check]
            timeout = 4s
            [agent]
            interval = 2m
            [kind wwan]
            interval = 30m
            success-threshold = 40%
            [interface wwan1]
            interval = 1h
            probes = google apple
            [interface eth0]
            stall-window = off
            """)
        let wwan0 = configuration.probingSettings(for: "wwan0", kind: .wwan, metered: true)
        let wwan1 = configuration.probingSettings(for: "wwan1", kind: .wwan, metered: true)
        let eth0 = configuration.probingSettings(for: "eth0", kind: .ethernet, metered: false)
        let eth1 = configuration.probingSettings(for: "eth1", kind: .ethernet, metered: false)
        #expect(wwan0.intervalMilliseconds == 1_800_000)
        #expect(wwan1.intervalMilliseconds == 3_600_000)
        #expect(eth1.intervalMilliseconds == 120_000)
        #expect(wwan1.successThresholdPercent == 40)
        #expect(eth1.successThresholdPercent == 50)
        #expect(wwan0.timeoutMilliseconds == 4_000)
        #expect(wwan1.probes(from: configuration.probes).map(\.name) == ["apple", "google"])
        #expect(wwan0.probes(from: configuration.probes).count == 5)
        #expect(eth0.stallWindowMilliseconds == nil)
        #expect(eth1.stallWindowMilliseconds == 1_500)
    }

    @Test func aMoreSpecificLayerCanSwitchABudgetOff() throws {
        let configuration = try parse("""
            [agent]
            wwan-daily-budget = 5MiB
            [interface wwan9]
            daily-budget = off
            """)
        #expect(configuration.probingSettings(for: "wwan0", kind: .wwan, metered: true).dailyBudgetBytes == 5 << 20)
        #expect(configuration.probingSettings(for: "wwan9", kind: .wwan, metered: true).dailyBudgetBytes == nil)
    }

    @Test func meteredAutoMeansCellularOrALeaseThatSaysSo() throws {
        let configuration = try parse("""
            [interface wlan1]
            metered = yes
            [interface wwan1]
            metered = no
            [kind other]
            metered = yes
            """)
        #expect(configuration.isMetered("wwan0", kind: .wwan))
        #expect(!configuration.isMetered("wwan1", kind: .wwan))
        #expect(!configuration.isMetered("wlan0", kind: .wifi))
        #expect(configuration.isMetered("wlan0", kind: .wifi, leaseSaysMetered: true))
        #expect(configuration.isMetered("wlan1", kind: .wifi))
        #expect(configuration.isMetered("usb0", kind: .other))
    }

    @Test func theCommandLineBeatsEveryLayer() throws {
        var configuration = try parse("[interface eth0]\ntimeout = 9s\n")
        configuration.commandLine.timeoutMilliseconds = 1_500
        #expect(configuration.probingSettings(for: "eth0", kind: .ethernet, metered: false).timeoutMilliseconds == 1_500)
    }

    @Test(arguments: [
        ("[kind modem]\ninterval = 1m\n", 1, nil as String?, "expected one of ethernet, wifi, wwan, other"),
        ("[kind wwan]\nkind = wifi\n", 2, "kind", "unknown key in [kind wwan]"),
        ("[interface eth0]\nmetered = maybe\n", 2, "metered", "expected yes, no or auto"),
        ("[interface eth0]\nprobes = google nosuch\n", 2, "probes", "no probe named 'nosuch'"),
        ("[agent]\nstall-window = 100ms\n", 2, "stall-window", "outside"),
        ("[agent]\ntimeout = 5s\n", 2, "timeout", "unknown key in [agent]"),
    ])
    func badProbingSettings(text: String, line: Int, key: String?, message: String) {
        expectError(text, line: line, key: key, mentioning: message)
    }

    @Test func probesMayNameProbesDefinedLater() throws {
        let configuration = try parse("""
            [interface eth0]
            probes = lab
            [probe lab]
            url = http://192.0.2.80/generate_204
            """)
        #expect(configuration.probingSettings(for: "eth0", kind: .ethernet, metered: false)
            .probes(from: configuration.probes).map(\.name) == ["lab"])
    }
}
