import Testing
import UplinkCore

/// Drop-in files: read after the main file, each may open a section again and
/// override what came before, and every error names its own file.
@Suite("Drop-in configuration files")
struct DropInTests {
    private func parse(_ files: [(String, String)]) throws(ConfigurationError) -> Configuration {
        try ConfigurationParser(fileName: "uplinkd.conf")
            .parse(files.map { ConfigurationParser.Source(fileName: $0.0, text: $0.1) })
    }

    @Test func aLaterFileOverridesAKeyAndKeepsTheRest() throws {
        let configuration = try parse([
            ("uplinkd.conf", "[agent]\nhold-down = 10s\nverify-age = 2s\npriority = wwan ethernet\n"),
            ("uplinkd.conf.d/10-site.conf", "[agent]\nhold-down = 45s\npriority = wifi\n"),
        ])
        #expect(configuration.agent.holdDownMilliseconds == 45_000)
        #expect(configuration.agent.verifyAgeMilliseconds == 2_000)
        // A list is replaced, not extended.
        #expect(configuration.agent.priority == [.kind(.wifi)])
    }

    @Test func theLastFileWinsAndSectionsMergePerInterface() throws {
        let configuration = try parse([
            ("uplinkd.conf", "[interface wwan0]\ninterval = 10m\nmetered = yes\n"),
            ("a.conf", "[interface wwan0]\ninterval = 20m\n"),
            ("b.conf", "[interface wwan0]\ninterval = 30m\n[agent]\nlog-level = debug\n"),
        ])
        #expect(configuration.interfaces["wwan0"]?.probing.intervalMilliseconds == 1_800_000)
        #expect(configuration.interfaces["wwan0"]?.probing.metered == .yes)
        #expect(configuration.agent.logLevel == .debug)
    }

    @Test func aProbeGivenAgainReplacesTheEarlierOneInPlace() throws {
        let configuration = try parse([
            ("uplinkd.conf", "[check]\ndefault-probes = no\n[probe one]\nurl = http://192.0.2.1/a\n[probe two]\nurl = http://192.0.2.2/b\n"),
            ("x.conf", "[probe one]\nurl = http://192.0.2.9/c\nexpect-status = 200\n"),
        ])
        #expect(configuration.probes.map(\.name) == ["one", "two"])
        #expect(configuration.probes[0].url.description == "http://192.0.2.9/c")
        #expect(configuration.probes[0].expectation.status == 200)
    }

    @Test func errorsNameTheDropInAndItsLine() {
        #expect(throws: ConfigurationError(file: "d/20-bad.conf", line: 3, key: "hold-down",
                                           message: "expected a duration with a unit, such as 5s or 500ms; got 'soon'")) {
            try parse([("uplinkd.conf", "[agent]\nhold-down = 5s\n"), ("d/20-bad.conf", "# site\n[agent]\nhold-down = soon\n")])
        }
        // A probe selection naming an unknown probe points at the file that made it.
        do {
            _ = try parse([("uplinkd.conf", ""), ("d/x.conf", "[kind wwan]\nprobes = nosuch\n")])
            Issue.record("an unknown probe name was accepted")
        } catch {
            #expect(error.file == "d/x.conf" && error.line == 2 && error.key == "probes")
        }
    }

    @Test func aProbeSelectionReplacedByALaterFileIsCheckedAsReplaced() throws {
        // The main file's selection names a built-in probe the drop-in removes; the
        // drop-in's own selection replaces it, so nothing is wrong.
        let configuration = try parse([
            ("u.conf", "[kind wwan]\nprobes = apple\n"),
            ("u.conf.d/a.conf", "[check]\ndefault-probes = no\n[probe mine]\nurl = http://192.0.2.1/x\n[kind wwan]\nprobes = mine\n"),
        ])
        #expect(configuration.kinds[.wwan]?.probeNames == ["mine"])
    }

    @Test func checksOfTheMergedConfigurationNameTheFileThatDecided() {
        #expect(throws: ConfigurationError(file: "u.conf.d/a.conf", line: 3, key: "https-only",
                                           message: "https-only is on but probe 'apple' uses plain HTTP (http://captive.apple.com/hotspot-detect.html); set default-probes = no and give https probes")) {
            try parse([("u.conf", "[agent]\nhold-down = 1s\n"), ("u.conf.d/a.conf", "# tls only\n[check]\nhttps-only = yes\n")])
        }
        do {
            _ = try parse([("u.conf", "[agent]\nflap-suppress = 900\n"), ("u.conf.d/b.conf", "[agent]\nflap-reuse = 1000\n")])
            Issue.record("flap-reuse above flap-suppress was accepted")
        } catch {
            #expect(error.file == "u.conf.d/b.conf" && error.line == 2 && error.key == "flap-reuse")
        }
    }

    @Test func withinOneFileTheStrictRulesStillHold() {
        #expect(throws: ConfigurationError.self) {
            try parse([("uplinkd.conf", ""), ("d/x.conf", "[agent]\nhold-down = 5s\n[agent]\nverify-age = 1s\n")])
        }
        #expect(throws: ConfigurationError.self) {
            try parse([("uplinkd.conf", ""), ("d/x.conf", "[agent]\nhold-down = 5s\nhold-down = 6s\n")])
        }
    }

    @Test func checksOfTheWholeConfigurationSeeTheMergedResult() throws {
        // The main file alone would be refused (reuse above suppress); the drop-in fixes it.
        let configuration = try parse([
            ("uplinkd.conf", "[agent]\nflap-reuse = 2000\n"),
            ("d/x.conf", "[agent]\nflap-suppress = 3000\n"),
        ])
        #expect(configuration.agent.damping.suppressLimit == 3_000)
    }

    @Test func logLevelAndReadyTimeoutAreParsedAndChecked() throws {
        let configuration = try parse([("uplinkd.conf", "[agent]\nlog-level = warning\nready-timeout = 45s\nvendor-hooks-dir = /opt/hooks\n")])
        #expect(configuration.agent.logLevel == .warning)
        #expect(configuration.agent.readyTimeoutMilliseconds == 45_000)
        #expect(configuration.agent.vendorHooksDirectory == "/opt/hooks")
        #expect(throws: ConfigurationError.self) { try parse([("uplinkd.conf", "[agent]\nlog-level = loud\n")]) }
        #expect(throws: ConfigurationError.self) { try parse([("uplinkd.conf", "[agent]\nready-timeout = 2m\n")]) }
        #expect(throws: ConfigurationError.self) { try parse([("uplinkd.conf", "[agent]\nvendor-hooks-dir = hooks\n")]) }
        #expect(LogLevel.debug < LogLevel.notice && LogLevel.warning < LogLevel.error)
    }
}
