import Testing
import UplinkCore
import UplinkLinux

/// config/uplinkd.conf is what the package installs: it must parse as shipped, and
/// with every commented key and section uncommented (each shows a real value).
@Suite("Shipped configuration")
struct ShippedConfigurationTests {
    private func shipped() throws -> String {
        // Tests/UplinkLinuxTests/ShippedConfigurationTests.swift -> repository root.
        let root = String(#filePath).split(separator: "/").dropLast(4).joined(separator: "/")
        let bytes = try SmallFile.readAll("/\(root)/config/uplinkd.conf", limit: 1 << 20)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func parsesAsShippedToTheBuiltInDefaults() throws {
        #expect(try ConfigurationParser(fileName: "uplinkd.conf").parse(try shipped()) == Configuration())
    }

    @Test func parsesWithEveryKeyUncommented() throws {
        let uncommented = try shipped().split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard line.hasPrefix("#"), let next = line.dropFirst().first, next.isLetter || next == "[" else { return String(line) }
            return String(line.dropFirst())
        }.joined(separator: "\n")
        let configuration = try ConfigurationParser(fileName: "uplinkd.conf").parse(uncommented)
        // The [agent] defaults shown are the unmetered class's (all probes, by name).
        var shown = configuration.probingSettings(for: "eth0", kind: .ethernet, metered: false)
        var builtIn = Configuration().probingSettings(for: "eth0", kind: .ethernet, metered: false)
        #expect(shown.probes(from: configuration.probes) == builtIn.probes(from: Configuration().probes))
        shown.probeNames = nil
        builtIn.probeNames = nil
        #expect(shown == builtIn)
        #expect(configuration.kinds[.wwan]?.intervalMilliseconds == 1_800_000)
        #expect(configuration.interfaces["usb0"]?.probing.metered == .yes)
    }
}
