import Glibc
import Testing
import UplinkLinux

/// Sources/README.md's "Targets" is the map of Sources/: under a heading naming one or
/// more targets, one line per top-level folder or file of each (a line may name a
/// pattern such as `*.c`), and the modules the target's files may import, with what
/// each folder adds. Written by hand, maps drift: so the section is held to the tree
/// (every entry present, listed once, nothing listed that is gone) and to the code (no
/// file imports what its line does not allow).
@Suite("Sources map")
struct SourcesMapTests {
    // Tests/UplinkLinuxTests/Documentation/SourcesMapTests.swift -> repository root.
    private static let root = "/" + String(#filePath).split(separator: "/").dropLast(4).joined(separator: "/")

    @Test func theMapMatchesTheTreeAndTheImports() throws {
        let text = String(decoding: try SmallFile.readAll("\(Self.root)/Sources/README.md", limit: 1 << 20), as: UTF8.self)
        let layout = SourcesMap(text: text)
        #expect(layout.problems == [], "Sources/README.md's Targets could not be read as documented")
        let tree = try SourceTree.read("\(Self.root)/Sources")
        #expect(tree.count >= 5, "Sources/ has too few targets: \(tree.keys.sorted())")
        for problem in layout.differences(from: tree) {
            Issue.record("\(problem)")
        }
    }

    /// The reader and the comparison on a made-up map and tree, so every kind of
    /// drift is shown to be caught (and named) without touching the real files.
    @Test func driftOfEveryKindIsNamed() {
        let layout = SourcesMap(text: """
            # x
            ## Targets
            ### `Core`
            The core.
            Imports: `Pattern`.
            - `Agent/`: the agent.
            - `Rounds/`: rounds (imports `CCurl`).
            - `Agent/`: again.
            - `Gone/`: no longer there.
            ### `CLib`, `COther`
            - `module.modulemap`, `shim.h`: the library.
            - `*.c`: sources.
            ### `Ghost`
            - `G.swift`: a target that is gone.
            ### Tests
            - `Tests/X`: not a target, not checked.
            ### `Core`
            - oops
            ## Testing
            ### `Later`
            - `L.swift`: outside the section.
            """)
        #expect(layout.problems == [
            "Sources/README.md line 17: '### `Core`' appears twice in Targets",
            "Sources/README.md line 18: not a '- `entry`: concern' line under '### `Core`'",
        ])
        let tree: [String: [SourceFile]] = [
            "Core": [SourceFile(path: "Agent/A.swift", imports: ["Pattern"]),
                     SourceFile(path: "Rounds/R.swift", imports: ["CCurl", "Pattern"]),
                     SourceFile(path: "Agent/B.swift", imports: ["CCurl"]),
                     SourceFile(path: "Links/L.swift", imports: [])],
            "CLib": [SourceFile(path: "module.modulemap", imports: []), SourceFile(path: "shim.h", imports: []),
                     SourceFile(path: "a.c", imports: [])],
            "COther": [SourceFile(path: "module.modulemap", imports: [])],
            "Shim": [SourceFile(path: "include/shim.h", imports: [])],
        ]
        #expect(layout.differences(from: tree) == [
            "Sources/README.md lists Sources/Core/Agent/ 2 times in Targets; list it once",
            "Sources/README.md's Targets lists Sources/Core/Gone/, which does not exist",
            "Sources/Core/Links/ is missing from Sources/README.md's Targets (under '### `Core`')",
            "Sources/Core/Agent/B.swift imports CCurl, which Sources/README.md's Targets does not allow there",
            "Sources/README.md's Targets lists Sources/COther/shim.h, which does not exist",
            "Sources/README.md's Targets lists Sources/COther/*.c, which does not exist",
            "Sources/README.md's Targets has '### `Ghost`', which is not a directory under Sources/",
            "Sources/Shim has no '### `Shim`' subsection in Sources/README.md's Targets",
        ])
    }
}

/// One file of a target: its path inside the target and the modules it imports.
struct SourceFile: Equatable {
    var path: String
    var imports: [String]

    /// The folder or file at the target's top level that holds it: `Agent/` or `main.swift`.
    var topLevel: String {
        guard let slash = path.firstIndex(of: "/") else { return path }
        return String(path[...slash])
    }
}

/// Sources/README.md's "Targets" section as this test reads it: from `## Targets` to
/// the next `## ` heading; a heading "### `A`" or "### `A`, `B`" opens the subsection of
/// those targets (other `###` headings close it); under it "Imports: none." or
/// "Imports: `X`, `Y`." sets what its files may import, and each line starting with
/// "- " lists entries, "- `entry`: concern" or "- `one`, `two`: concern", where a
/// "(imports `Z`)" in the line adds to what the entries' files may import.
struct SourcesMap {
    struct Entry {
        var name: String
        var imports: Set<String>
    }

    struct Section {
        var targets: [String]
        var imports: Set<String> = []
        var entries: [Entry] = []
    }

    private(set) var sections: [Section] = []
    private(set) var problems: [String] = []

    init(text: String) {
        var inSection = false
        var current: Int?
        var seen: Set<String> = []
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = offset + 1
            if line.hasPrefix("## ") {
                inSection = line == "## Targets"
                current = nil
                continue
            }
            guard inSection else { continue }
            if line.hasPrefix("### ") {
                current = nil
                let targets = Self.quoted(in: line.dropFirst(4))
                guard !targets.isEmpty, line.dropFirst(4).hasPrefix("`") else { continue }
                if let again = targets.first(where: seen.contains) {
                    // Its lines still belong to the first subsection of that name.
                    problems.append("Sources/README.md line \(number): '### `\(again)`' appears twice in Targets")
                    current = sections.firstIndex { $0.targets.contains(again) }
                    continue
                }
                seen.formUnion(targets)
                sections.append(Section(targets: targets))
                current = sections.count - 1
            } else if let index = current, line.hasPrefix("Imports:") {
                sections[index].imports = Set(Self.quoted(in: line.dropFirst(8)))
            } else if let index = current, line.hasPrefix("- ") {
                guard let names = Self.entries(of: line.dropFirst(2)) else {
                    problems.append("Sources/README.md line \(number): not a '- `entry`: concern' line under '### `\(sections[index].targets.joined(separator: "`, `"))`'")
                    continue
                }
                var extra: Set<String> = []
                if let added = Self.text(after: "(imports ", in: line) {
                    extra = Set(Self.quoted(in: added.prefix { $0 != ")" }))
                }
                sections[index].entries += names.map { Entry(name: $0, imports: extra) }
            }
        }
        if sections.isEmpty { problems.append("Sources/README.md has no '## Targets' section with '### `Target`' subsections") }
    }

    /// What follows the first `marker` in `line`.
    private static func text(after marker: String, in line: Substring) -> Substring? {
        var rest = line
        while !rest.isEmpty {
            if rest.hasPrefix(marker) { return rest.dropFirst(marker.count) }
            rest = rest.dropFirst()
        }
        return nil
    }

    /// Every `quoted` name in `text`, in order.
    private static func quoted(in text: Substring) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// "`a`, `b`: concern" -> ["a", "b"]; nil when the line is not of that form.
    private static func entries(of entry: Substring) -> [String]? {
        var rest = entry
        var names: [String] = []
        while rest.first == "`" {
            rest = rest.dropFirst()
            guard let close = rest.firstIndex(of: "`"), close != rest.startIndex else { return nil }
            names.append(String(rest[..<close]))
            rest = rest[rest.index(after: close)...]
            if rest.hasPrefix(":") { return names }
            guard rest.hasPrefix(", ") else { return nil }
            rest = rest.dropFirst(2)
        }
        return nil
    }

    private static func matches(_ entry: String, _ topLevel: String) -> Bool {
        guard entry.hasPrefix("*") else { return entry == topLevel }
        return !topLevel.hasSuffix("/") && topLevel.hasSuffix(entry.dropFirst())
    }

    /// Every way the section and the tree (target to its files) disagree, one sentence
    /// each naming the entry, file or target.
    func differences(from tree: [String: [SourceFile]]) -> [String] {
        var found: [String] = []
        var described: Set<String> = []
        for section in sections {
            for target in section.targets {
                described.insert(target)
                guard let files = tree[target] else {
                    found.append("Sources/README.md's Targets has '### `\(target)`', which is not a directory under Sources/")
                    continue
                }
                found += Self.differences(section, target: target, files: files)
            }
        }
        for target in tree.keys.sorted() where !described.contains(target) {
            found.append("Sources/\(target) has no '### `\(target)`' subsection in Sources/README.md's Targets")
        }
        return found
    }

    private static func differences(_ section: Section, target: String, files: [SourceFile]) -> [String] {
        var found: [String] = []
        let topLevels = Set(files.map(\.topLevel))
        var counts: [String: Int] = [:]
        for entry in section.entries { counts[entry.name, default: 0] += 1 }
        for entry in section.entries.map(\.name).uniqued() {
            if counts[entry, default: 0] > 1 {
                found.append("Sources/README.md lists Sources/\(target)/\(entry) \(counts[entry]!) times in Targets; list it once")
            }
            if !topLevels.contains(where: { matches(entry, $0) }) {
                found.append("Sources/README.md's Targets lists Sources/\(target)/\(entry), which does not exist")
            }
        }
        for topLevel in topLevels.sorted() where !section.entries.contains(where: { matches($0.name, topLevel) }) {
            found.append("Sources/\(target)/\(topLevel) is missing from Sources/README.md's Targets (under '### `\(target)`')")
        }
        for file in files {
            let allowed = section.imports.union(section.entries.filter { matches($0.name, file.topLevel) }
                                                .flatMap(\.imports))
            for module in file.imports where !allowed.contains(module) {
                found.append("Sources/\(target)/\(file.path) imports \(module), which Sources/README.md's Targets does not allow there")
            }
        }
        return found
    }
}

extension Array where Element: Hashable {
    fileprivate func uniqued() -> [Element] {
        var seen: Set<Element> = []
        return filter { seen.insert($0).inserted }
    }
}

/// The files of each target directory under Sources/: target name to its regular
/// files at any depth (hidden entries left out), with the modules each Swift file
/// imports.
enum SourceTree {
    static func read(_ sources: String) throws -> [String: [SourceFile]] {
        var tree: [String: [SourceFile]] = [:]
        for name in try SmallFile.directoryEntries(sources) where isDirectory("\(sources)/\(name)") {
            tree[name] = try files(in: "\(sources)/\(name)", prefix: "")
        }
        return tree
    }

    private static func files(in directory: String, prefix: String) throws -> [SourceFile] {
        var found: [SourceFile] = []
        for name in try SmallFile.directoryEntries(directory).sorted() {
            let path = "\(directory)/\(name)"
            if isDirectory(path) {
                found += try files(in: path, prefix: "\(prefix)\(name)/")
            } else {
                let imports = name.hasSuffix(".swift") ? try importsOf(path) : []
                found.append(SourceFile(path: "\(prefix)\(name)", imports: imports))
            }
        }
        return found
    }

    /// Modules named by `import` lines (with any attribute or access level before).
    private static func importsOf(_ path: String) throws -> [String] {
        let text = String(decoding: try SmallFile.readAll(path, limit: 1 << 20), as: UTF8.self)
        return text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                  words[..<index].allSatisfy({ $0.hasPrefix("@") || ["public", "package", "internal"].contains($0) })
            else { return nil }
            return String(words[index + 1])
        }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}
