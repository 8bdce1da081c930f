extension CaptivePortalCheck {
    /// The one GET of the captive-portal API a full round sends beside its probes:
    /// HTTPS with the certificate checked (the URI is https by RFC 8910), asking for
    /// the API's media type, bound to the uplink like any probe.
    package static func request(_ uri: ProbeURL, interface: InterfaceName, family: AddressFamily) -> ProbeRequest {
        var spec = ProbeSpec(name: "captive-portal-api", url: uri, expectation: Expectation(status: 200))
        spec.accept = CaptivePortalAPI.mediaType
        return ProbeRequest(interface: interface, family: family, probe: spec)
    }

    /// How the API's request is sent: as the round's probes, with the API's own body cap.
    package static func settings(_ round: ProbeSettings) -> ProbeSettings {
        var settings = round
        settings.bodyLimitBytes = CaptivePortalAPI.bodyLimitBytes
        return settings
    }

    /// What the API's answer says: a status from a whole 200 answer's JSON, else no
    /// status and the problem named. `lookupBytes` is what resolving its name cost.
    package init(uri: ProbeURL, answer: ProbeResult, lookupBytes: Int) {
        let bytes = answer.bytes + lookupBytes
        guard case .response(let response) = answer.outcome else {
            let why = if case .failure(let failure) = answer.outcome { failure.reason.rawValue } else { "no HTTP" }
            self.init(uri: uri, status: nil, problem: "no answer (\(why))", bytes: bytes)
            return
        }
        guard response.status == 200, !response.bodyTruncated else {
            let problem = response.bodyTruncated ? "answer over \(CaptivePortalAPI.bodyLimitBytes) bytes" : "HTTP status \(response.status)"
            self.init(uri: uri, status: nil, problem: problem, bytes: bytes)
            return
        }
        do throws(CaptivePortalAPI.Invalid) {
            self.init(uri: uri, status: try CaptivePortalAPI.status(from: response.body), bytes: bytes)
        } catch {
            self.init(uri: uri, status: nil, problem: error.message, bytes: bytes)
        }
    }

    /// The API's host name did not resolve to an address it may be asked at. (A
    /// private answer is normal here: the API lives inside the captive network.)
    package static func unresolved(_ uri: ProbeURL, host: String, lookupBytes: Int) -> CaptivePortalCheck {
        CaptivePortalCheck(uri: uri, status: nil, problem: "cannot resolve \(host)", bytes: lookupBytes)
    }

    /// Where the API may be asked after resolving its name: any followable answer
    /// (private ones included); empty when the lookup failed.
    package static func addresses(from lookup: DNSLookup, family: AddressFamily) -> [IPAddress] {
        guard case .success(let answer) = lookup.result else { return [] }
        return DNSEvidence.followable(answer.addresses, family: family)
    }
}
