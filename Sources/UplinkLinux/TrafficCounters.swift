import Glibc
import UplinkCore

/// Reads an interface's packet counters (what leaves and what comes back).
public protocol TrafficCounting: AnyObject {
    /// Received and transmitted packets since the device appeared; nil when unreadable.
    func packets(of name: InterfaceName) -> (received: UInt64, transmitted: UInt64)?
}

/// The counters from sysfs (`statistics/rx_packets`, `tx_packets`), kept open and
/// re-read with pread at offset 0 (sysfs renders a fresh value each time), so a sample
/// costs two system calls. Reopened when the interface changes or a read fails.
public final class SysfsTrafficCounters: TrafficCounting {
    private let classNetPath: String
    private var open: (name: InterfaceName, received: FileDescriptor, transmitted: FileDescriptor)?

    public init(classNetPath: String = "/sys/class/net") {
        self.classNetPath = classNetPath
    }

    public func packets(of name: InterfaceName) -> (received: UInt64, transmitted: UInt64)? {
        if open?.name != name {
            let base = "\(classNetPath)/\(name.value)/statistics"
            guard let received = try? FileDescriptor.open("\(base)/rx_packets", O_RDONLY),
                  let transmitted = try? FileDescriptor.open("\(base)/tx_packets", O_RDONLY) else {
                open = nil
                return nil
            }
            open = (name, received, transmitted)
        }
        guard let files = open, let received = SysfsTrafficCounters.value(files.received),
              let transmitted = SysfsTrafficCounters.value(files.transmitted) else {
            open = nil  // the device went away; the next sample reopens
            return nil
        }
        return (received, transmitted)
    }

    private static func value(_ file: FileDescriptor) -> UInt64? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = try? Syscall.call("pread \(file.label)") {
            buffer.withUnsafeMutableBytes { pread(file.rawValue, $0.baseAddress, $0.count, 0) }
        }
        guard let count, count > 0 else { return nil }
        return UInt64(String(decoding: buffer[0..<count], as: UTF8.self).trimmingWhitespace)
    }
}
