import CNetlink

/// A libnl failure: the libnl error code (NLE_*) and its sentence.
public struct NetlinkError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public let operation: String

    init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code < 0 ? -code : code
    }

    public var description: String {
        "\(operation): \(String(cString: nl_geterror(code))) (libnl error \(code))"
    }
}
