import CLinuxShim
import Glibc
import Testing
@testable import UplinkLinux

/// The sd_notify datagrams, received on a socket of the test's own.
@Suite("systemd notifications")
struct SystemdNotifierTests {
    /// A bound datagram socket and what arrived on it.
    private final class Listener {
        let descriptor: Int32
        init(path: String) throws {
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            var bytes = Array(path.utf8)
            let abstract = bytes.first == UInt8(ascii: "@")
            if abstract { bytes[0] = 0 }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in bytes.enumerated() { raw[index] = byte }
            }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
            }
            guard result == 0 else { throw SystemError("bind \(path)") }
        }

        deinit { close(descriptor) }

        /// The next datagram, without waiting (it was sent before this is called).
        func next() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4_096)
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            return count < 0 ? nil : String(decoding: buffer[0..<count], as: UTF8.self)
        }
    }

    @Test func messagesReachAPathSocket() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = "\(directory.path)/notify"
        let listener = try Listener(path: path)
        let notifier = SystemdNotifier(socketPath: path, watchdogMicroseconds: "20000000", watchdogPID: nil, ownPID: 42)
        #expect(notifier.isActive)
        #expect(notifier.watchdogMilliseconds == 20_000)
        notifier.ready(status: "primary eth0;\neth0 online")
        #expect(listener.next() == "READY=1\nSTATUS=primary eth0; eth0 online")
        notifier.status("primary eth0; eth0 online")
        #expect(listener.next() == nil)  // unchanged: not sent again
        notifier.status("no primary; eth0 down (no-carrier)")
        #expect(listener.next() == "STATUS=no primary; eth0 down (no-carrier)")
        notifier.watchdog()
        #expect(listener.next() == "WATCHDOG=1")
        notifier.reloading(monotonicMicroseconds: 1_500_000)
        #expect(listener.next() == "RELOADING=1\nMONOTONIC_USEC=1500000\nSTATUS=reloading the configuration")
        notifier.stopping()
        #expect(listener.next() == "STOPPING=1\nSTATUS=stopping")
        unlink(path)
    }

    @Test func messagesReachAnAbstractSocket() throws {
        let name = "@uplinkd-test-\(getpid())"
        let listener = try Listener(path: name)
        let notifier = SystemdNotifier(socketPath: name, watchdogMicroseconds: nil, watchdogPID: nil, ownPID: 42)
        notifier.watchdog()
        #expect(listener.next() == "WATCHDOG=1")
        #expect(notifier.watchdogMilliseconds == nil)
    }

    @Test func withoutASocketNothingIsSentAndNothingFails() {
        let notifier = SystemdNotifier(socketPath: nil, watchdogMicroseconds: nil, watchdogPID: nil, ownPID: 42)
        #expect(!notifier.isActive)
        notifier.ready(status: "x")
        #expect(!SystemdNotifier(socketPath: "vsock:2:1", watchdogMicroseconds: nil, watchdogPID: nil, ownPID: 1).isActive)
    }

    @Test func theWatchdogIsOursOnlyWhenWatchdogPIDNamesUs() {
        #expect(SystemdNotifier.watchdogInterval(microseconds: "30000000", pid: "42", ownPID: 42) == 30_000)
        #expect(SystemdNotifier.watchdogInterval(microseconds: "30000000", pid: "41", ownPID: 42) == nil)
        #expect(SystemdNotifier.watchdogInterval(microseconds: "0", pid: nil, ownPID: 42) == nil)
        #expect(SystemdNotifier.watchdogInterval(microseconds: "soon", pid: nil, ownPID: 42) == nil)
    }
}
