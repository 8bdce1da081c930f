import UplinkCore

/// Reads and validates the configuration file: an explicitly named file must exist;
/// the default file is optional and built-in defaults apply without it. The agent
/// keeps one to read the file again on reload (HUP, or the embedding API).
public struct ConfigurationLoader: Sendable {
    /// The largest configuration file read; anything larger is refused.
    public static let maximumBytes = 1 << 20

    /// `--config FILE`, or nil for the default path.
    public let explicitPath: String?

    public init(explicitPath: String?) {
        self.explicitPath = explicitPath
    }

    /// The file that is (or would be) read.
    public var path: String { explicitPath ?? Configuration.defaultPath }

    public func load() throws(ConfigurationError) -> Configuration {
        if explicitPath == nil && !SmallFile.exists(path) {
            return Configuration()
        }
        let bytes: [UInt8]
        do {
            bytes = try SmallFile.readAll(path, limit: ConfigurationLoader.maximumBytes)
        } catch {
            throw ConfigurationError(file: path, line: nil, key: nil, message: "cannot read: \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationError(file: path, line: nil, key: nil, message: "is not valid UTF-8 text")
        }
        return try ConfigurationParser(fileName: path).parse(text)
    }
}
