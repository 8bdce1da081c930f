import Glibc
import Testing
import UplinkCore
import UplinkLinux

/// The loader finds the drop-ins next to the main file and reads them in name order.
@Suite("Configuration loader and drop-ins")
struct ConfigurationLoaderTests {
    @Test func dropInsApplyInNameOrderAndOnlyConfFilesCount() throws {
        let directory = try TemporaryDirectory()
        defer {
            for name in (try? SmallFile.directoryEntries("\(directory.path)/main.conf.d")) ?? [] {
                unlink("\(directory.path)/main.conf.d/\(name)")
            }
            rmdir("\(directory.path)/main.conf.d")
            directory.remove()
        }
        try directory.write("main.conf", "[agent]\nhold-down = 1s\nverify-age = 1s\n")
        #expect(mkdir("\(directory.path)/main.conf.d", 0o755) == 0)
        try directory.write("main.conf.d/20-late.conf", "[agent]\nhold-down = 20s\n")
        try directory.write("main.conf.d/10-early.conf", "[agent]\nhold-down = 10s\nverify-age = 10s\n")
        try directory.write("main.conf.d/30-ignored.conf~", "[agent]\nhold-down = soon\n")
        try directory.write("main.conf.d/40-ignored.dpkg-dist", "nonsense\n")
        #expect(mkfifo("\(directory.path)/main.conf.d/50-fifo.conf", 0o644) == 0)

        let loader = ConfigurationLoader(explicitPath: "\(directory.path)/main.conf")
        #expect(try loader.files() == ["\(directory.path)/main.conf", "\(directory.path)/main.conf.d/10-early.conf",
                                       "\(directory.path)/main.conf.d/20-late.conf"])
        let configuration = try loader.load()
        #expect(configuration.agent.holdDownMilliseconds == 20_000)
        #expect(configuration.agent.verifyAgeMilliseconds == 10_000)

        try directory.write("main.conf.d/15-bad.conf", "[agent]\nhold-down = soon\n")
        #expect(throws: ConfigurationError(file: "\(directory.path)/main.conf.d/15-bad.conf", line: 2, key: "hold-down",
                                           message: "expected a duration with a unit, such as 5s or 500ms; got 'soon'")) {
            try loader.load()
        }
    }

    @Test func noFilesAtAllGiveTheBuiltInDefaults() throws {
        let loader = ConfigurationLoader(explicitPath: nil)
        // The default path on a development machine may exist; only check the shape.
        if !SmallFile.exists(loader.path) && !SmallFile.exists(loader.dropInDirectory) {
            #expect(try loader.files().isEmpty)
            #expect(try loader.load() == Configuration())
        }
        #expect(loader.dropInDirectory == "/etc/uplinkd/uplinkd.conf.d")
    }
}
