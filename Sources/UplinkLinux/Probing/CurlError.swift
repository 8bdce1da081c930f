import CCurl

/// A libcurl failure outside a transfer (setting an option, adding a handle): the
/// CURLcode or CURLMcode and libcurl's sentence.
package struct CurlError: Error, Sendable, CustomStringConvertible {
    package let code: Int
    package let message: String

    init(easy code: CURLcode, _ context: String) {
        self.code = Int(code.rawValue)
        message = "\(context): \(String(cString: curl_easy_strerror(code)))"
    }

    init(multi code: CURLMcode, _ context: String) {
        self.code = Int(code.rawValue)
        message = "\(context): \(String(cString: curl_multi_strerror(code)))"
    }

    package var description: String { "\(message) (curl code \(code))" }
}
