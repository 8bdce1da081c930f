/// A name and the addresses it must resolve to through every uplink: a resolver that
/// answers otherwise is lying (`[dns] known-answer`).
package struct KnownAnswer: Sendable, Equatable {
    package var name: String
    package var addresses: [IPAddress]

    package init(name: String, addresses: [IPAddress]) {
        self.name = name
        self.addresses = addresses
    }

    /// The families this check can be asked in: those of the expected addresses.
    package var families: Set<AddressFamily> { Set(addresses.map(\.family)) }
}

/// What the known-answer lookup found for one family of one uplink.
package enum KnownAnswerResult: Sendable, Equatable {
    case matched
    /// The resolver answered, with none of the expected addresses.
    case mismatch([IPAddress])
    /// No answer: says nothing about lying (the probes tell whether DNS works).
    case unanswered

    package static func judge(_ answers: [IPAddress], expected: KnownAnswer) -> KnownAnswerResult {
        answers.contains(where: expected.addresses.contains) ? .matched : .mismatch(answers)
    }
}

extension KnownAnswerResult {
    /// The known-answer lookup's outcome: any expected address matches, another
    /// answer is a lie, and no answer says nothing.
    package static func judge(_ lookup: DNSLookup, expected: KnownAnswer) -> KnownAnswerResult {
        guard case .success(let answer) = lookup.result else { return .unanswered }
        return judge(answer.addresses, expected: expected)
    }
}
