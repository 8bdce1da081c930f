/// One probe to send: which probe, through which interface, over which family.
package struct ProbeRequest: Sendable, Equatable {
    package var interface: InterfaceName
    package var family: AddressFamily
    package var probe: ProbeSpec
    /// Where the probe's host name resolved through the uplink's own DNS; the prober
    /// connects only there. Empty for an IP-literal URL.
    package var addresses: [IPAddress]

    package init(interface: InterfaceName, family: AddressFamily, probe: ProbeSpec, addresses: [IPAddress] = []) {
        self.interface = interface
        self.family = family
        self.probe = probe
        self.addresses = addresses
    }

    /// The host name to resolve, or nil when the URL holds an address.
    package var hostNeedingResolution: String? {
        IPAddress(probe.url.host) == nil ? probe.url.host : nil
    }
}

/// What came back for one probe request, with its cost.
package struct ProbeResult: Sendable, Equatable {
    package var request: ProbeRequest
    package var outcome: ProbeOutcome
    /// From the start of the lookup (or the exchange, without one) to the end.
    package var elapsedMilliseconds: Int
    /// Bytes on the wire at the IP level, DNS included.
    package var bytes: Int
    /// Time the name lookup took, when this round looked the name up.
    package var dnsMilliseconds: Int?
    /// The smallest TTL of the answer, when this round looked the name up.
    package var dnsTTLSeconds: Int?
    /// The TCP handshake completed (a timeout after it means slow, not unreachable).
    package var connected = false
    /// How long the handshake took from the start of the exchange, when it completed.
    package var connectMilliseconds: Int?

    package init(request: ProbeRequest, outcome: ProbeOutcome, elapsedMilliseconds: Int, bytes: Int,
                dnsMilliseconds: Int? = nil, dnsTTLSeconds: Int? = nil) {
        self.request = request
        self.outcome = outcome
        self.elapsedMilliseconds = elapsedMilliseconds
        self.bytes = bytes
        self.dnsMilliseconds = dnsMilliseconds
        self.dnsTTLSeconds = dnsTTLSeconds
    }

    /// The HTTP exchange alone (elapsed time without the lookup).
    package var exchangeMilliseconds: Int { elapsedMilliseconds - (dnsMilliseconds ?? 0) }
}
