/// The built-in probe set: several independent operators over plain HTTP, so that a
/// single blocked or allow-listed endpoint cannot decide alone.
package enum DefaultProbes {
    package static let all: [ProbeSpec] = [
        make("apple", "http://captive.apple.com/hotspot-detect.html",
             Expectation(status: 200, bodyContains: "<BODY>Success</BODY>")),
        make("google", "http://connectivitycheck.gstatic.com/generate_204",
             Expectation(status: 204)),
        make("firefox", "http://detectportal.firefox.com/success.txt",
             Expectation(status: 200, bodyEquals: "success")),
        make("microsoft", "http://www.msftconnecttest.com/connecttest.txt",
             Expectation(status: 200, bodyEquals: "Microsoft Connect Test")),
        make("debian", "http://network-test.debian.org/nm",
             Expectation(status: 200, bodyEquals: "NetworkManager is online")),
    ]

    private static func make(_ name: String, _ url: String, _ expectation: Expectation) -> ProbeSpec {
        // The literals above are fixed and valid; a failure here is a programming error.
        ProbeSpec(name: name, url: try! ProbeURL(parsing: url), expectation: expectation)
    }
}
