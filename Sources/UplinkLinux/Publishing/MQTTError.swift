import CMosquitto
import Glibc

/// libmosquitto's return codes (`enum mosq_err_t`), turned into Swift at the edge.
package enum MosquittoCode: Int, Sendable {
    case connectionPending = -1
    case success = 0
    case noMemory = 1
    case protocolError = 2
    case invalidArgument = 3
    case noConnection = 4
    case connectionRefused = 5
    case notFound = 6
    case connectionLost = 7
    case tls = 8
    case payloadSize = 9
    case notSupported = 10
    case authentication = 11
    case aclDenied = 12
    case unknown = 13
    case systemError = 14
    case nameLookup = 15
    case proxy = 16
    case malformedUTF8 = 18
    case keepAlive = 19
    case lookup = 20
    case malformedPacket = 21
    case tlsHandshake = 23
    case oversizePacket = 25
    case timeout = 27
    /// A code this list does not name (a newer library).
    case other = 9_999

    init(_ raw: Int32) {
        self = MosquittoCode(rawValue: Int(raw)) ?? .other
    }

    /// A sentence for the codes an older libmosquitto calls "Unknown error." (Debian
    /// 12's 2.0.11 names none from 19 on, the lost keep-alive among them).
    var sentence: String? {
        switch self {
        case .malformedUTF8: "malformed UTF-8"
        case .keepAlive: "no answer to the keep-alive (the broker, or the path to it, is gone)"
        case .lookup: "the broker's name could not be looked up"
        case .malformedPacket: "the broker sent a malformed packet"
        case .tlsHandshake: "the TLS handshake failed"
        case .oversizePacket: "a packet over the size the other side allows"
        case .timeout: "timed out"
        default: nil
        }
    }
}

/// A libmosquitto failure: the code, its number and a sentence (libmosquitto's own,
/// with what uplinkd was doing). Never carries the credentials.
package struct MQTTError: Error, Sendable, CustomStringConvertible {
    package let code: MosquittoCode
    package let rawCode: Int
    package let message: String

    init(_ raw: Int32, _ context: String) {
        code = MosquittoCode(raw)
        rawCode = Int(raw)
        var sentence = String(cString: mosquitto_strerror(raw))
        if code == .systemError {
            // libmosquitto's sentence for MOSQ_ERR_ERRNO is the errno's.
            sentence = String(cString: strerror(errno))
        } else if sentence.hasPrefix("Unknown error"), let own = code.sentence {
            sentence = own
        }
        message = "\(context): \(sentence)"
    }

    /// A failure of uplinkd's own around the library (credentials file, node id).
    init(setup message: String) {
        code = .invalidArgument
        rawCode = Int(MosquittoCode.invalidArgument.rawValue)
        self.message = message
    }

    package var description: String { "\(message) (mosquitto code \(rawCode))" }
}
