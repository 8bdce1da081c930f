import Glibc
import UplinkCore

/// Reads an interface's packet counters (what leaves and what comes back).
package protocol TrafficCounting: AnyObject {
    /// Received and transmitted packets since the device appeared; nil when unreadable.
    func packets(of name: InterfaceName) -> (received: UInt64, transmitted: UInt64)?
}

/// The counters from sysfs (`statistics/rx_packets`, `tx_packets`), kept open and
/// re-read with pread at offset 0 (sysfs renders a fresh value each time), so a sample
/// costs two system calls. Reopened when the interface changes or a read fails.
package final class SysfsTrafficCounters: TrafficCounting {
    private let classNetPath: String
    private var open: (name: InterfaceName, received: FileDescriptor, transmitted: FileDescriptor)?

    package init(classNetPath: String = "/sys/class/net") {
        self.classNetPath = classNetPath
    }

    package func packets(of name: InterfaceName) -> (received: UInt64, transmitted: UInt64)? {
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

    /// One counter: sysfs renders it as decimal digits and a newline. Parsed from the
    /// bytes on the stack: this runs every second for as long as the agent lives, and
    /// going through String (decode, trim, convert) was most of its cost.
    private static func value(_ file: FileDescriptor) -> UInt64? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer -> UInt64? in
            guard let count = try? Syscall.call("pread \(file.label)", {
                pread(file.rawValue, buffer.baseAddress, buffer.count, 0)
            }), count > 0 else { return nil }
            var value: UInt64 = 0
            var digits = 0
            for byte in buffer[0..<count] {
                if byte == UInt8(ascii: "\n") { break }
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                let (times10, over1) = value.multipliedReportingOverflow(by: 10)
                let (sum, over2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                if over1 || over2 { return nil }
                value = sum
                digits += 1
            }
            return digits > 0 ? value : nil
        }
    }
}
