/// DNS answers as evidence (the design's `captive` row): a probe host name that
/// resolves, through the uplink's own servers, only to addresses that can never be
/// the public internet was answered by something local, a portal.
package enum DNSEvidence {
    package enum Judgement: Sendable, Equatable {
        /// Send the probe to these addresses.
        case pin([IPAddress])
        /// Every answer was private, link-local, loopback, ULA or unspecified.
        case hijacked([IPAddress])
    }

    /// `family` is the record family asked for. IPv4-mapped answers to an AAAA query
    /// are never pinned: Linux would carry them over IPv4 and make IPv6 look alive.
    package static func judge(_ answers: [IPAddress], family: AddressFamily, hijackCheck: Bool) -> Judgement {
        let usable = answers.filter { family == .ipv4 || $0.mappedIPv4 == nil }
        guard hijackCheck else { return .pin(usable) }
        if !answers.isEmpty && answers.allSatisfy(\.isSpecialPurpose) { return .hijacked(answers) }
        // Mixed answers: keep the public ones, never probe a private address.
        return .pin(usable.filter { !$0.isSpecialPurpose })
    }

    /// The addresses of a hijacked answer the probe may still be sent to, so the
    /// portal's own answer (its redirect, meta refresh or WISPr block) can name its
    /// login page. Never loopback or unspecified: those would probe this machine,
    /// not the network behind the uplink. IPv4-mapped answers to an AAAA query are
    /// left out as in `judge`. Empty: send nothing, the DNS answer alone is the evidence.
    package static func followable(_ answers: [IPAddress], family: AddressFamily) -> [IPAddress] {
        answers.filter {
            $0.family == family && $0.mappedIPv4 == nil && !$0.isLoopback && $0.notOneHost == nil
        }
    }
}
