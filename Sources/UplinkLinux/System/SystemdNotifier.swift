import CLinuxShim
import Glibc

/// Tells systemd how the agent is doing, over the datagram protocol of sd_notify(3)
/// (`READY=1`, `STATUS=`, `WATCHDOG=1`, `RELOADING=1`, `STOPPING=1`). The protocol is
/// one datagram per message to the socket NOTIFY_SOCKET names, so it is a few lines
/// here rather than a dependency on libsystemd (see README's dependency table).
///
/// Without NOTIFY_SOCKET (not started by systemd, or `Type=simple`) every call does
/// nothing. A failed send is logged once and never stops the agent: systemd will act
/// on the missing message (a start time-out, a watchdog restart) by itself.
package final class SystemdNotifier {
    private let socketPath: [UInt8]
    private let socket: FileDescriptor?
    /// How often systemd wants `WATCHDOG=1`, in milliseconds (WatchdogSec=), when it
    /// watches this process.
    package let watchdogMilliseconds: Int?
    private var lastStatus: String?
    private var reportedFailure = false

    /// Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID, then removes them from the
    /// environment so no child (hook, validator) can speak for the agent.
    package convenience init() {
        func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        self.init(socketPath: variable("NOTIFY_SOCKET"), watchdogMicroseconds: variable("WATCHDOG_USEC"),
                  watchdogPID: variable("WATCHDOG_PID"), ownPID: Int(getpid()))
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { unsetenv(name) }
    }

    init(socketPath: String?, watchdogMicroseconds: String?, watchdogPID: String?, ownPID: Int) {
        let path = socketPath.map { Array($0.utf8) } ?? []
        // An absolute path or an abstract name; anything else (vsock:, empty) is not
        // ours to speak, so we stay silent.
        if path.first == UInt8(ascii: "/") || path.first == UInt8(ascii: "@") {
            self.socketPath = path
            let raw = Glibc.socket(AF_UNIX, Int32(UPLINKD_SOCK_DGRAM) | Int32(UPLINKD_SOCK_CLOEXEC), 0)
            socket = raw >= 0 ? FileDescriptor(owning: raw, label: "systemd notification socket") : nil
            if raw < 0 { Log.warning("systemd notifications off: \(SystemError("socket(AF_UNIX)"))") }
        } else {
            self.socketPath = []
            socket = nil
        }
        watchdogMilliseconds = SystemdNotifier.watchdogInterval(microseconds: watchdogMicroseconds,
                                                                pid: watchdogPID, ownPID: ownPID)
    }

    /// Whether systemd listens at all.
    package var isActive: Bool { socket != nil }

    /// WatchdogSec= in milliseconds when it applies to this process: WATCHDOG_PID, when
    /// set, must name us (a variable inherited from a parent is not ours).
    static func watchdogInterval(microseconds: String?, pid: String?, ownPID: Int) -> Int? {
        guard let microseconds, let value = Int(microseconds), value > 0 else { return nil }
        if let pid, Int(pid) != ownPID { return nil }
        return max(1, value / 1_000)
    }

    package func ready(status: String) {
        let line = SystemdNotifier.oneLine(status)
        send("READY=1\nSTATUS=\(line)")
        lastStatus = line
    }

    /// `STATUS=`, sent only when it changed.
    package func status(_ text: String) {
        let line = SystemdNotifier.oneLine(text)
        guard line != lastStatus else { return }
        lastStatus = line
        send("STATUS=\(line)")
    }

    /// A status never smuggles a second assignment into the datagram.
    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }

    package func watchdog() { send("WATCHDOG=1") }

    /// Before a reload; `ready` again after it. MONOTONIC_USEC lets systemd 253 and
    /// later tell this reload from an earlier one (older ones ignore it).
    package func reloading(monotonicMicroseconds: Int) {
        send("RELOADING=1\nMONOTONIC_USEC=\(monotonicMicroseconds)\nSTATUS=reloading the configuration")
    }

    package func stopping() { send("STOPPING=1\nSTATUS=stopping") }

    private func send(_ message: String) {
        guard let socket else { return }
        let bytes = Array(message.utf8)
        let sent = socketPath.withUnsafeBufferPointer { path in
            bytes.withUnsafeBufferPointer { data in
                path.withMemoryRebound(to: CChar.self) { name in
                    uplinkd_send_datagram(socket.rawValue, name.baseAddress, name.count, data.baseAddress, data.count)
                }
            }
        }
        if sent < 0 && !reportedFailure {
            reportedFailure = true
            Log.warning("cannot notify systemd: \(SystemError("sendto NOTIFY_SOCKET"))")
        } else if sent >= 0 {
            reportedFailure = false
        }
    }
}
