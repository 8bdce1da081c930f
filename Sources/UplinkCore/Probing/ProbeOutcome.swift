/// What the network did with one probe: the raw facts, before any judgement.
package enum ProbeOutcome: Sendable, Equatable {
    case response(ProbeResponse)
    case failure(TransportFailure)
    /// The probe's host name resolved, through the uplink's own DNS, only to addresses
    /// the public internet never uses: something local answers for the name. The
    /// probe is still sent there (see `DNSEvidence.followable`) to learn where the
    /// portal wants the user to go; `answer` is what came back, nil when nothing was
    /// sent or the exchange failed. The DNS answer stays the evidence either way.
    case dnsHijack([IPAddress], answer: ProbeResponse? = nil)
    /// The TCP handshake with the probe's server completed and nothing more was sent:
    /// a liveness check's answer (see `RoundPurpose.liveness`).
    case handshake

    /// A hijacked DNS answer followed by the HTTP exchange with the address it gave.
    /// A failed exchange leaves only the DNS evidence: the portal said nothing better.
    package static func hijacked(_ answers: [IPAddress], followedBy exchange: ProbeOutcome) -> ProbeOutcome {
        if case .response(let response) = exchange { return .dnsHijack(answers, answer: response) }
        return .dnsHijack(answers)
    }
}

/// An HTTP answer, as far as it was read.
package struct ProbeResponse: Sendable, Equatable {
    package var status: Int
    /// The Location header, if any (redirects are never followed).
    package var location: String?
    /// The body, at most the configured number of bytes.
    package var body: [UInt8]
    /// True when the server sent more than the cap and the read was cut.
    package var bodyTruncated: Bool
    /// Result of the external validator, when the probe has one and it ran.
    package var validatorAccepted: Bool?

    package init(status: Int, location: String? = nil, body: [UInt8] = [], bodyTruncated: Bool = false,
                validatorAccepted: Bool? = nil) {
        self.status = status
        self.location = location
        self.body = body
        self.bodyTruncated = bodyTruncated
        self.validatorAccepted = validatorAccepted
    }

    package var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// Why no HTTP answer arrived. Adapters map libcurl and errno codes into these at the edge.
package enum TransportFailure: Sendable, Equatable {
    case dnsFailed
    case timeout
    case refused
    case unreachable
    case reset
    case tls
    /// The socket could not be bound to the interface (missing, or no CAP_NET_RAW).
    case bindFailed
    case other(code: Int, message: String)

    /// The machine-readable reason used in verdicts.
    package var reason: Reason {
        switch self {
        case .dnsFailed: return .dnsFailed
        case .timeout: return .timeout
        case .refused: return .refused
        case .unreachable: return .unreachable
        case .reset: return .reset
        case .tls: return .tls
        case .bindFailed: return .bindFailed
        case .other: return .error
        }
    }
}
