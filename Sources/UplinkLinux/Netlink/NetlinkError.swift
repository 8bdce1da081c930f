import CNetlink

/// A libnl failure: the libnl error code (NLE_*) and its sentence.
package struct NetlinkError: Error, Sendable, CustomStringConvertible {
    package let code: Int32
    package let operation: String

    init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code < 0 ? -code : code
    }

    package var description: String {
        "\(operation): \(String(cString: nl_geterror(code))) (libnl error \(code))"
    }
}
