import Glibc
import UplinkCore

/// Reads and validates the configuration file and its drop-ins: an explicitly named
/// file must exist; the default file is optional and built-in defaults apply without
/// it. Drop-ins (`FILE.d/*.conf`) are read after it in name order. The agent
/// keeps one to read the file again on reload (HUP, or the embedding API).
public struct ConfigurationLoader: Sendable {
    /// The largest configuration file read; anything larger is refused.
    package static let maximumBytes = 1 << 20

    /// `--config FILE`, or nil for the default path.
    public let explicitPath: String?

    public init(explicitPath: String?) {
        self.explicitPath = explicitPath
    }

    /// The file that is (or would be) read.
    public var path: String { explicitPath ?? Configuration.defaultPath }

    /// Where drop-in files are looked for: `uplinkd.conf.d` next to `uplinkd.conf`.
    package var dropInDirectory: String { path + ".d" }

    /// The most drop-in files read; more is surely a mistake (a wrong directory).
    package static let maximumDropIns = 256

    /// The files read, in the order they apply: the main file (when it exists or was
    /// named) and then each drop-in.
    package func files() throws(ConfigurationError) -> [String] {
        var files: [String] = []
        if explicitPath != nil || SmallFile.exists(path) { files.append(path) }
        let names: [String]
        do {
            names = try SmallFile.directoryEntries(dropInDirectory, limit: ConfigurationLoader.maximumDropIns + 1)
        } catch {
            guard error.errno == ENOENT || error.errno == ENOTDIR else {
                throw ConfigurationError(file: dropInDirectory, line: nil, key: nil, message: "cannot read: \(error)")
            }
            return files
        }
        // Only `*.conf`: editor backups and dpkg's `.dpkg-dist` copies are left alone.
        // Regular files (or links to them) only: a FIFO must not stall a reload.
        let dropIns = names.filter { name in
            var info = stat()
            return name.hasSuffix(".conf") && stat("\(dropInDirectory)/\(name)", &info) == 0
                && info.st_mode & S_IFMT == S_IFREG
        }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        guard dropIns.count <= ConfigurationLoader.maximumDropIns else {
            throw ConfigurationError(file: dropInDirectory, line: nil, key: nil,
                                     message: "more than \(ConfigurationLoader.maximumDropIns) files; refusing to read them")
        }
        return files + dropIns.map { "\(dropInDirectory)/\($0)" }
    }

    public func load() throws(ConfigurationError) -> Configuration {
        var sources: [ConfigurationParser.Source] = []
        for file in try files() {
            let bytes: [UInt8]
            do {
                bytes = try SmallFile.readAll(file, limit: ConfigurationLoader.maximumBytes)
            } catch {
                throw ConfigurationError(file: file, line: nil, key: nil, message: "cannot read: \(error)")
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw ConfigurationError(file: file, line: nil, key: nil, message: "is not valid UTF-8 text")
            }
            sources.append(ConfigurationParser.Source(fileName: file, text: text))
        }
        if sources.isEmpty { return Configuration() }
        return try ConfigurationParser(fileName: path).parse(sources)
    }
}
