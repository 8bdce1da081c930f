/// Leaves the agent's own packets (its MQTT connection) out of an uplink's device
/// counters before stall detection reads them, sample by sample: what the device
/// counted since the last sample, less what the agent's connections counted, never
/// below nothing.
///
/// Why not from the totals: the connections count TCP segments and the device counts
/// packets, and one large write can leave as a single GSO packet of several segments.
/// Subtracted from the totals, the own count runs ahead; the counters then seem to go
/// back, which `TrafficMonitor` must take for a new device (forgetting how long nothing
/// came back), and the excess hides the LAN's next packets. A stall under a busy MQTT
/// connection was found late that way.
package struct OwnTrafficFilter: Sendable {
    /// Packets received and transmitted, cumulative.
    package struct Counts: Sendable, Equatable {
        package var received: UInt64
        package var transmitted: UInt64

        package init(received: UInt64, transmitted: UInt64) {
            self.received = received
            self.transmitted = transmitted
        }
    }

    /// Each interface's last sample: its device counters, the own counts, what was handed on.
    private var last: [InterfaceName: (device: Counts, own: Counts, handed: Counts)] = [:]

    package init() {}

    /// The counters to hand to stall detection for this sample of `interface`.
    package mutating func filtered(_ interface: InterfaceName, device: Counts, own: Counts) -> Counts {
        let handed: Counts
        if let last = last[interface], device.received >= last.device.received,
           device.transmitted >= last.device.transmitted,
           own.received >= last.own.received, own.transmitted >= last.own.transmitted {
            func grown(_ device: UInt64, _ own: UInt64) -> UInt64 { device > own ? device - own : 0 }
            handed = Counts(
                received: last.handed.received
                    + grown(device.received - last.device.received, own.received - last.own.received),
                transmitted: last.handed.transmitted
                    + grown(device.transmitted - last.device.transmitted, own.transmitted - last.own.transmitted))
        } else {
            // The first sample of this device (or it was created again): only the
            // totals can be compared.
            handed = Counts(received: device.received - min(device.received, own.received),
                            transmitted: device.transmitted - min(device.transmitted, own.transmitted))
        }
        last[interface] = (device, own, handed)
        return handed
    }
}
