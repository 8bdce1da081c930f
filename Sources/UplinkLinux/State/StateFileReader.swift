import UplinkCore

/// Reads the agent's state file for other processes (`uplinkd status`,
/// `uplinkd wait-online`): a bounded read, then the decoder.
package enum StateFileReader {
    /// The largest state file read: far above any real one (a line per uplink).
    package static let maximumBytes = 1 << 20

    /// Why a state file could not be read.
    package enum Failure: Error {
        /// Missing, unreadable or too large.
        case unreadable(SystemError)
        /// Read, but not a state file of a format this version knows.
        case malformed(StateFileFormat.DecodeError)
    }

    package static func read(_ path: String) throws(Failure) -> AgentState {
        let bytes: [UInt8]
        do {
            bytes = try SmallFile.readAll(path, limit: maximumBytes)
        } catch {
            throw .unreadable(error)
        }
        do {
            return try StateFileFormat.decode(String(decoding: bytes, as: UTF8.self))
        } catch {
            throw .malformed(error)
        }
    }
}
