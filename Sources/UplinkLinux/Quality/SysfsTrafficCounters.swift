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
///
/// IPv6 multicast is left out (`/proc/net/dev_snmp6/NAME`, when the interface has
/// IPv6): the kernel's own router solicitations, neighbour solicitations and MLD
/// reports leave an uplink with nothing due back, and each would look like a quiet
/// client's request to the lone-packet rule (a confirming round for nothing).
package final class SysfsTrafficCounters: TrafficCounting {
    private let classNetPath: String
    private let snmp6Path: String
    private var open: (name: InterfaceName, received: FileDescriptor, transmitted: FileDescriptor, ipv6: FileDescriptor?)?

    package init(classNetPath: String = "/sys/class/net", snmp6Path: String = "/proc/net/dev_snmp6") {
        self.classNetPath = classNetPath
        self.snmp6Path = snmp6Path
    }

    package func packets(of name: InterfaceName) -> (received: UInt64, transmitted: UInt64)? {
        if open?.name != name {
            let base = "\(classNetPath)/\(name.value)/statistics"
            guard let received = try? FileDescriptor.open("\(base)/rx_packets", O_RDONLY),
                  let transmitted = try? FileDescriptor.open("\(base)/tx_packets", O_RDONLY) else {
                open = nil
                return nil
            }
            open = (name, received, transmitted, try? FileDescriptor.open("\(snmp6Path)/\(name.value)", O_RDONLY))
        }
        guard let files = open, let received = SysfsTrafficCounters.value(files.received),
              let transmitted = SysfsTrafficCounters.value(files.transmitted) else {
            open = nil  // the device went away; the next sample reopens
            return nil
        }
        // Read after the device's counters: a multicast packet sent between the two
        // reads is subtracted without having been counted, never the other way round
        // (the counts only grow, and both are clamped at zero).
        guard let ipv6 = files.ipv6, let multicast = SysfsTrafficCounters.multicast(ipv6) else {
            return (received, transmitted)
        }
        return (received - min(received, multicast.received), transmitted - min(transmitted, multicast.sent))
    }

    /// Ip6InMcastPkts and Ip6OutMcastPkts of a dev_snmp6 file ("Name  value" lines).
    private static func multicast(_ file: FileDescriptor) -> (received: UInt64, sent: UInt64)? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8 * 1_024) { buffer -> (UInt64, UInt64)? in
            guard let count = try? Syscall.call("pread \(file.label)", {
                pread(file.rawValue, buffer.baseAddress, buffer.count, 0)
            }), count > 0 else { return nil }
            return snmp6Multicast(UnsafeBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// The two multicast counters of a dev_snmp6 text; nil when either is missing.
    static func snmp6Multicast(_ text: UnsafeBufferPointer<UInt8>) -> (received: UInt64, sent: UInt64)? {
        var received: UInt64?, sent: UInt64?
        var lineStart = 0
        while lineStart < text.count {
            let lineEnd = text[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? text.count
            let line = UnsafeBufferPointer(rebasing: text[lineStart..<lineEnd])
            if let space = line.firstIndex(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
                let name = UnsafeBufferPointer(rebasing: line[..<space])
                // The value, without the spaces and tab that align it.
                let value = line[space...].lazy.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
                if name.elementsEqual("Ip6InMcastPkts".utf8) { received = decimal(value) }
                else if name.elementsEqual("Ip6OutMcastPkts".utf8) { sent = decimal(value) }
            }
            lineStart = lineEnd + 1
        }
        guard let received, let sent else { return nil }
        return (received, sent)
    }

    /// A whole number written as decimal digits and nothing else (at least one digit,
    /// no overflow); nil otherwise.
    private static func decimal<Bytes: Sequence>(_ bytes: Bytes) -> UInt64? where Bytes.Element == UInt8 {
        var value: UInt64 = 0
        var digits = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, over1) = value.multipliedReportingOverflow(by: 10)
            let (sum, over2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            if over1 || over2 { return nil }
            value = sum
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// One counter: sysfs renders it as decimal digits and a newline. Parsed from the
    /// bytes on the stack: this runs every second for as long as the agent lives, and
    /// going through String (decode, trim, convert) was most of its cost.
    private static func value(_ file: FileDescriptor) -> UInt64? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer -> UInt64? in
            guard let count = try? Syscall.call("pread \(file.label)", {
                pread(file.rawValue, buffer.baseAddress, buffer.count, 0)
            }), count > 0 else { return nil }
            return decimal(buffer[0..<count].prefix { $0 != UInt8(ascii: "\n") })
        }
    }
}
