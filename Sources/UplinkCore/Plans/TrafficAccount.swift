/// Which network device a set of counters belongs to: the kernel's counters start at
/// zero when a device is created, so counters of different devices are never
/// subtracted from each other. A device is its interface index within one boot (the
/// kernel's boot id: after a reboot every device is new, whatever its index).
package struct DeviceIdentity: Sendable, Equatable, Hashable {
    package var bootID: String
    package var index: Int

    package init(bootID: String, index: Int) {
        self.bootID = bootID
        self.index = index
    }
}

/// A device's 64-bit link statistics at one moment, with what is needed to count IP
/// bytes from them.
package struct CounterReading: Sendable, Equatable {
    package var device: DeviceIdentity
    package var receivedBytes: UInt64
    package var transmittedBytes: UInt64
    package var receivedPackets: UInt64
    package var transmittedPackets: UInt64
    /// Link-layer header the device counts with each packet (14 on Ethernet-framed
    /// devices: veth, USB tethering, a modem's ECM or MBIM network device in Ethernet
    /// mode; 0 on raw-IP ones: wwan in raw-IP mode, PPP, tun). Carriers bill IP packets.
    package var headerBytes: Int
    /// The kernel's last word on a removed device (RTM_DELLINK), not a dump's reading.
    package var isRemoval = false

    package init(device: DeviceIdentity, receivedBytes: UInt64, transmittedBytes: UInt64, receivedPackets: UInt64,
                transmittedPackets: UInt64, headerBytes: Int) {
        self.device = device
        self.receivedBytes = receivedBytes
        self.transmittedBytes = transmittedBytes
        self.receivedPackets = receivedPackets
        self.transmittedPackets = transmittedPackets
        self.headerBytes = headerBytes
    }

    /// The header bytes per packet for a device of this ARPHRD type (1: Ethernet).
    package static func headerBytes(hardwareType: Int) -> Int {
        hardwareType == 1 ? 14 : 0
    }
}

/// Bytes each way, at the IP level.
package struct ByteCounts: Sendable, Equatable {
    package var received: Int
    package var transmitted: Int

    package init(received: Int = 0, transmitted: Int = 0) {
        self.received = received
        self.transmitted = transmitted
    }

    package var total: Int { received + transmitted }

    package static func + (a: ByteCounts, b: ByteCounts) -> ByteCounts {
        ByteCounts(received: a.received + b.received, transmitted: a.transmitted + b.transmitted)
    }
}

/// Turns an uplink's successive counter readings into bytes it carried, across
/// everything that happens to counters: each reading is compared with the last one
/// taken (the baseline, persisted with the counts so a restarted agent goes on from
/// it), and only what is new is counted, so nothing is counted twice and the count
/// never goes backwards.
///
/// - The same device, counters grown: the difference.
/// - Another device (a modem re-enumerated and its interface was created again, or the
///   gateway rebooted): the new device's counters started at zero when it was
///   created, so all of them are new. What the old one carried after its last reading
///   is counted only if that reading came from its removal (the kernel's last word on
///   it, see `LinkCounterSource`); otherwise it is lost, never guessed.
/// - The same device, counters lower (a driver that clears its statistics): counted
///   from zero, as for a new device.
/// - No baseline (counting just began): nothing, only the baseline is taken: what the
///   device carried before the plan was configured is not this plan's.
/// - The removal of a device already replaced (read after its successor's first
///   reading): nothing, and the baseline stays: its counts up to its last reading were taken,
///   and taking it now as "another device" would count its whole life again, then
///   its successor's.
package struct TrafficAccount: Sendable, Equatable {
    package private(set) var baseline: CounterReading?
    /// Devices the baseline moved away from (the last few; not persisted: a late
    /// removal does not outlive the agent that read its successor).
    private var replaced: [DeviceIdentity] = []

    package init(baseline: CounterReading? = nil) {
        self.baseline = baseline
    }

    package static func == (a: TrafficAccount, b: TrafficAccount) -> Bool { a.baseline == b.baseline }

    /// Takes a reading; returns the IP bytes carried since the last one. Each way on
    /// its own: a veth's last word (its removal) reports what it received as zero
    /// (those counters are its peer's, gone first) while what it sent has grown, and
    /// taking that as a cleared device would count everything it sent again.
    package mutating func take(_ reading: CounterReading) -> ByteCounts {
        guard let previous = baseline else {
            baseline = reading
            return ByteCounts()
        }
        let sameDevice = previous.device == reading.device
        if !sameDevice {
            if reading.isRemoval && replaced.contains(reading.device) { return ByteCounts() }
            replaced = Array((replaced + [previous.device]).suffix(4))
        }
        baseline = reading
        let receivedGrown = reading.receivedBytes >= previous.receivedBytes
            && reading.receivedPackets >= previous.receivedPackets
        let transmittedGrown = reading.transmittedBytes >= previous.transmittedBytes
            && reading.transmittedPackets >= previous.transmittedPackets
        let receivedSince = sameDevice && receivedGrown ? previous : nil
        let transmittedSince = sameDevice && transmittedGrown ? previous : nil
        return ByteCounts(
            received: TrafficAccount.ipBytes(reading.receivedBytes - (receivedSince?.receivedBytes ?? 0),
                                             packets: reading.receivedPackets - (receivedSince?.receivedPackets ?? 0),
                                             headerBytes: reading.headerBytes),
            transmitted: TrafficAccount.ipBytes(
                reading.transmittedBytes - (transmittedSince?.transmittedBytes ?? 0),
                packets: reading.transmittedPackets - (transmittedSince?.transmittedPackets ?? 0),
                headerBytes: reading.headerBytes))
    }

    /// Link-layer bytes less each packet's header (never below zero: a counter that
    /// moved between two reads of one snapshot must not make a byte negative).
    static func ipBytes(_ bytes: UInt64, packets: UInt64, headerBytes: Int) -> Int {
        let header = packets.multipliedReportingOverflow(by: UInt64(headerBytes))
        guard !header.overflow, bytes > header.partialValue else { return 0 }
        return Int(clamping: bytes - header.partialValue)
    }
}
