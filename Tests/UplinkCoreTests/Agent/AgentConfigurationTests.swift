import Testing
import UplinkCore
import UplinkTestSupport

@Suite("Agent configuration")
struct AgentConfigurationTests {
    @Test func agentKeys() throws {
        let configuration = try ConfigurationParser(fileName: "a.conf").parse("""
            [agent]
            interval = 10m
            suspect-interval = 500ms
            failures-to-leave-online = 3
            successes-to-return = 1
            hold-down = 0s
            probe-when-online = no
            priority = eth1 wifi, wwan ethernet
            wwan-daily-budget = 2MiB
            state-file = /tmp/uplinkd/state
            hooks-dir = /tmp/hooks.d
            hook-timeout = 10s
            [interface wwan0]
            daily-budget = 512KiB
            """)
        let agent = configuration.agent
        let probing = configuration.probing
        #expect(probing.intervalMilliseconds == 600_000)
        #expect(probing.suspectIntervalMilliseconds == 500)
        #expect(probing.failuresToLeaveOnline == 3)
        #expect(probing.successesToReturnOnline == 1)
        #expect(agent.holdDownMilliseconds == 0)
        #expect(probing.probeWhenOnline == false)
        #expect(agent.priority == ["eth1", "wifi", "wwan", "ethernet"])
        #expect(agent.wwanDailyBudgetBytes == 2 << 20)
        #expect(agent.stateFilePath == "/tmp/uplinkd/state")
        #expect(agent.hooksDirectory == "/tmp/hooks.d")
        #expect(agent.hookTimeoutMilliseconds == 10_000)
        #expect(configuration.interfaces["wwan0"]?.probing.dailyBudget == .value(512 << 10))
        #expect(configuration.probingSettings(for: "wwan0", kind: .wwan, metered: true).dailyBudgetBytes == 512 << 10)
        #expect(configuration.probingSettings(for: "wwan1", kind: .wwan, metered: true).dailyBudgetBytes == 2 << 20)
        #expect(configuration.probingSettings(for: "eth0", kind: .ethernet, metered: false).dailyBudgetBytes == nil)
    }

    @Test(arguments: [
        ("[agent]\ninterval = 5\n", "interval"),
        ("[agent]\ninterval = 500ms\n", "interval"),
        ("[agent]\nfailures-to-leave-online = 0\n", "failures-to-leave-online"),
        ("[agent]\nstate-file = run/state\n", "state-file"),
        ("[agent]\nhooks-dir = /etc/../tmp\n", "hooks-dir"),
        ("[agent]\npriority = eth0 bad/name\n", "priority"),
        ("[agent]\nwwan-daily-budget = lots\n", "wwan-daily-budget"),
        ("[agent]\nsleep = 1s\n", "sleep"),
        ("[interface wwan0]\ndaily-budget = 12\n", "daily-budget"),
    ])
    func badAgentValues(text: String, key: String) {
        do {
            _ = try ConfigurationParser(fileName: "a.conf").parse(text)
            Issue.record("expected an error for \(text)")
        } catch {
            #expect(error.line == 2)
            #expect(error.key == key)
        }
    }
}
