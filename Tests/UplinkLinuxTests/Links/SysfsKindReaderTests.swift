#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
import UplinkCore
import UplinkLinux

/// A fake /sys/class/net in a fresh temporary directory, removed by `remove()`.
final class FakeSysfs {
    let root: String
    /// Everything created, in creation order, so removal can run backwards.
    private var created: [(path: String, isDirectory: Bool)] = []

    init() throws {
        var template = Array("/tmp/uplinkd-sysfs-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw FakeSysfsError(what: "mkdtemp", code: errno) }
        root = String(cString: template)
    }

    func directory(_ relative: String) throws {
        let path = "\(root)/\(relative)"
        guard mkdir(path, 0o755) == 0 else { throw FakeSysfsError(what: "mkdir \(path)", code: errno) }
        created.append((path, true))
    }

    func file(_ relative: String, _ contents: String) throws {
        let path = "\(root)/\(relative)"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard fd >= 0 else { throw FakeSysfsError(what: "open \(path)", code: errno) }
        defer { close(fd) }
        created.append((path, false))
        let bytes = Array(contents.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw FakeSysfsError(what: "write \(path)", code: errno) }
    }

    func symlink(_ relative: String, to target: String) throws {
        let path = "\(root)/\(relative)"
        guard Glibc.symlink(target, path) == 0 else { throw FakeSysfsError(what: "symlink \(path)", code: errno) }
        created.append((path, false))
    }

    /// An interface directory with optional uevent DEVTYPE, type and device directory.
    func interface(_ name: String, devType: String? = nil, type: Int? = nil, device: Bool = false) throws {
        try directory(name)
        var uevent = "INTERFACE=\(name)\nIFINDEX=\(created.count)\n"
        if let devType { uevent = "DEVTYPE=\(devType)\n" + uevent }
        try file("\(name)/uevent", uevent)
        if let type { try file("\(name)/type", "\(type)\n") }
        if device { try directory("\(name)/device") }
    }

    func remove() {
        for entry in created.reversed() {
            if entry.isDirectory { rmdir(entry.path) } else { unlink(entry.path) }
        }
        created.removeAll()
        rmdir(root)
    }
}

struct FakeSysfsError: Error, CustomStringConvertible {
    let what: String
    let code: Int32
    var description: String { "\(what): errno \(code)" }
}

@Suite("SysfsKindReader on a fake sysfs tree")
struct SysfsKindReaderTests {
    func name(_ text: String) throws -> InterfaceName {
        try #require(InterfaceName(text))
    }

    /// Builds the whole fake tree; the caller removes it (it is removed here if building fails).
    func makeTree() throws -> (FakeSysfs, SysfsKindReader) {
        let tree = try FakeSysfs()
        do {
            // Names are chosen so the name convention alone would not give the expected kind.
            try tree.interface("radio0", devType: "wlan", type: 1, device: true)
            try tree.interface("modem0", devType: "wwan", type: 1, device: true)
            try tree.interface("usb0", type: 1, device: true)
            try tree.symlink("usb0/device/driver", to: "../../../../bus/usb/drivers/qmi_wwan")
            try tree.interface("mbim0", type: 1, device: true)
            try tree.symlink("mbim0/device/driver", to: "../../../../bus/usb/drivers/cdc_mbim")
            try tree.interface("mhi0", type: 1, device: true)
            try tree.symlink("mhi0/device/subsystem", to: "../../../../class/wwan")
            try tree.interface("ppp0", devType: "ppp", type: 512)
            try tree.interface("rmnet0", type: 519)
            try tree.interface("lan1", type: 1, device: true)
            try tree.symlink("lan1/device/driver", to: "../../../../bus/pci/drivers/e1000e")
            try tree.interface("br0", devType: "bridge", type: 1)
            try tree.interface("veth1", type: 1)
            try tree.interface("eth9", type: 1)
            try tree.interface("wlx1", type: 1, device: true)
            try tree.directory("wlx1/wireless")
        } catch {
            tree.remove()
            throw error
        }
        return (tree, SysfsKindReader(classNetPath: tree.root))
    }

    func removeAndCheck(_ tree: FakeSysfs) {
        tree.remove()
        #expect(access(tree.root, F_OK) != 0, "temporary tree \(tree.root) was not removed")
    }

    @Test func kindsFromTheTree() throws {
        let (tree, reader) = try makeTree()
        defer { removeAndCheck(tree) }
        let expected: [(String, InterfaceKind)] = [
            ("radio0", .wifi),      // DEVTYPE=wlan
            ("modem0", .wwan),      // DEVTYPE=wwan
            ("usb0", .wwan),        // device/driver -> qmi_wwan
            ("mbim0", .wwan),       // device/driver -> cdc_mbim
            ("mhi0", .wwan),        // device/subsystem -> wwan
            ("ppp0", .wwan),        // ARPHRD_PPP
            ("rmnet0", .wwan),      // ARPHRD_RAWIP
            ("lan1", .ethernet),    // ether with a bus device
            ("br0", .other),        // DEVTYPE=bridge
            ("veth1", .other),      // ether, no device, name says nothing
            ("eth9", .ethernet),    // ether, no device, name says ethernet
            ("wlx1", .wifi),        // wireless/ directory
        ]
        for (text, kind) in expected {
            #expect(try reader.kind(of: name(text), configured: nil) == kind, "\(text)")
        }
    }

    @Test func configuredKindWins() throws {
        let (tree, reader) = try makeTree()
        defer { removeAndCheck(tree) }
        #expect(try reader.kind(of: name("radio0"), configured: .wwan) == .wwan)
        #expect(try reader.kind(of: name("veth1"), configured: .ethernet) == .ethernet)
        #expect(try reader.kind(of: name("absent0"), configured: .wifi) == .wifi)
    }

    @Test func missingInterfaceHasNoEvidenceAndFallsBackToName() throws {
        let (tree, reader) = try makeTree()
        defer { removeAndCheck(tree) }
        #expect(try reader.evidence(for: name("absent0")) == nil)
        #expect(try reader.kind(of: name("absent0"), configured: nil) == .other)
        #expect(try reader.kind(of: name("wlan9"), configured: nil) == .wifi)
    }

    @Test func evidenceIsReadFaithfully() throws {
        let (tree, reader) = try makeTree()
        defer { removeAndCheck(tree) }
        let radio = try #require(try reader.evidence(for: name("radio0")))
        #expect(radio == KindEvidence(devType: "wlan", hardwareType: 1, hasDevice: true))

        let usb = try #require(try reader.evidence(for: name("usb0")))
        #expect(usb.driver == "qmi_wwan")
        #expect(usb.hasDevice)
        #expect(!usb.inWWANSubsystem)
        #expect(usb.devType == nil)

        let mhi = try #require(try reader.evidence(for: name("mhi0")))
        #expect(mhi.inWWANSubsystem)
        #expect(mhi.hardwareType == 1)

        let ppp = try #require(try reader.evidence(for: name("ppp0")))
        #expect(ppp == KindEvidence(devType: "ppp", hardwareType: 512, hasDevice: false))

        let veth = try #require(try reader.evidence(for: name("veth1")))
        #expect(veth == KindEvidence(hardwareType: 1, hasDevice: false))

        let wlx = try #require(try reader.evidence(for: name("wlx1")))
        #expect(wlx.hasWirelessDirectory)
    }
}
