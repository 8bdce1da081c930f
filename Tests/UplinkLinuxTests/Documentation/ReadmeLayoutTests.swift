import Glibc
import Testing
import UplinkLinux

/// README's "Code layout" names every target under Sources/ and every file in it with
/// its concern. Written by hand, it drifted before: files came without a line, and the
/// prose kept claims the code had outgrown. So the section is held to the tree: each
/// directory under Sources/ has a "### `Target`" subsection, each file in it (at any
/// depth) has exactly one "- `path`: concern" line there with its path inside the
/// target, and a line for a file that is gone fails as well.
@Suite("README code layout")
struct ReadmeLayoutTests {
    // Tests/UplinkLinuxTests/ReadmeLayoutTests.swift -> repository root.
    private static let root = "/" + String(#filePath).split(separator: "/").dropLast(4).joined(separator: "/")

    @Test func everySourceFileHasExactlyOneLineUnderItsTarget() throws {
        let readme = String(decoding: try SmallFile.readAll("\(Self.root)/README.md", limit: 1 << 20), as: UTF8.self)
        let layout = ReadmeLayout(readme: readme)
        #expect(layout.problems == [], "README.md's Code layout could not be read as documented")
        let tree = try SourceTree.read("\(Self.root)/Sources")
        #expect(tree.count >= 5, "Sources/ has too few targets: \(tree.keys.sorted())")
        for problem in layout.differences(from: tree) {
            Issue.record("\(problem)")
        }
    }

    /// The reader and the comparison on a made-up README and tree, so every kind of
    /// drift is shown to be caught (and named) without touching the real files.
    @Test func driftOfEveryKindIsNamed() {
        let layout = ReadmeLayout(readme: """
            # x
            ## Code layout
            ### `Core`
            The core.
            - `A.swift`: a.
            - `B.swift`: b.
            - `A.swift`: a again.
            - `Gone.swift`: no longer there.
            ### `CLib`
            - `module.modulemap`, `shim.h`: the library.
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
            "README.md line 15: '### `Core`' appears twice in Code layout",
            "README.md line 16: not a '- `path`: concern' line under '### `Core`'",
        ])
        let tree: [String: [String]] = [
            "Core": ["A.swift", "B.swift", "C.swift"],
            "CLib": ["module.modulemap", "shim.h"],
            "Shim": ["include/shim.h", "shim.c"],
        ]
        #expect(layout.differences(from: tree) == [
            "README.md lists Sources/Core/A.swift 2 times in Code layout; list it once",
            "Sources/Core/C.swift is missing from README.md's Code layout (under '### `Core`')",
            "README.md's Code layout lists Sources/Core/Gone.swift, which does not exist",
            "README.md's Code layout has '### `Ghost`', which is not a directory under Sources/",
            "Sources/Shim has no '### `Shim`' subsection in README.md's Code layout",
        ])
    }
}

/// README's "Code layout" section as this test reads it: from the line `## Code layout`
/// to the next `## ` heading, a heading "### `Name`" opens the subsection of the target
/// Sources/Name (other `###` headings close it), and under it each line starting with
/// "- " lists one or more files, "- `path`: concern" or "- `one`, `two`: concern".
struct ReadmeLayout {
    /// Target name to the paths listed under it, in README order (repeats kept).
    private(set) var listed: [String: [String]] = [:]
    private(set) var problems: [String] = []

    init(readme: String) {
        var inSection = false
        var target: String?
        for (offset, line) in readme.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = offset + 1
            if line.hasPrefix("## ") {
                inSection = line == "## Code layout"
                target = nil
                continue
            }
            guard inSection else { continue }
            if line.hasPrefix("### ") {
                target = nil
                let title = line.dropFirst(4)
                guard title.count > 2, title.hasPrefix("`"), title.hasSuffix("`") else { continue }
                let name = String(title.dropFirst().dropLast())
                if listed[name] != nil {
                    problems.append("README.md line \(number): '### `\(name)`' appears twice in Code layout")
                } else {
                    listed[name] = []
                }
                target = name
            } else if let name = target, line.hasPrefix("- ") {
                if let paths = Self.paths(of: line.dropFirst(2)) {
                    listed[name, default: []].append(contentsOf: paths)
                } else {
                    problems.append("README.md line \(number): not a '- `path`: concern' line under '### `\(name)`'")
                }
            }
        }
        if listed.isEmpty { problems.append("README.md has no '## Code layout' section with '### `Target`' subsections") }
    }

    /// "`a`, `b`: concern" -> ["a", "b"]; nil when the line is not of that form.
    private static func paths(of entry: Substring) -> [String]? {
        var rest = entry
        var paths: [String] = []
        while rest.first == "`" {
            rest = rest.dropFirst()
            guard let close = rest.firstIndex(of: "`"), close != rest.startIndex else { return nil }
            paths.append(String(rest[..<close]))
            rest = rest[rest.index(after: close)...]
            if rest.hasPrefix(":") { return paths }
            guard rest.hasPrefix(", ") else { return nil }
            rest = rest.dropFirst(2)
        }
        return nil
    }

    /// Every way the section and the tree (target to file paths inside it) disagree, one
    /// sentence each naming the file or target.
    func differences(from tree: [String: [String]]) -> [String] {
        var found: [String] = []
        for name in Set(tree.keys).union(listed.keys).sorted() {
            guard let files = tree[name] else {
                found.append("README.md's Code layout has '### `\(name)`', which is not a directory under Sources/")
                continue
            }
            guard let entries = listed[name] else {
                found.append("Sources/\(name) has no '### `\(name)`' subsection in README.md's Code layout")
                continue
            }
            var counts: [String: Int] = [:]
            for path in entries { counts[path, default: 0] += 1 }
            let present = Set(files)
            for path in Set(files).union(entries).sorted() {
                switch (present.contains(path), counts[path] ?? 0) {
                case (true, 0):
                    found.append("Sources/\(name)/\(path) is missing from README.md's Code layout (under '### `\(name)`')")
                case (true, 1):
                    break
                case (true, let times):
                    found.append("README.md lists Sources/\(name)/\(path) \(times) times in Code layout; list it once")
                case (false, _):
                    found.append("README.md's Code layout lists Sources/\(name)/\(path), which does not exist")
                }
            }
        }
        return found
    }
}

/// The files of each target directory under Sources/: target name to the paths of its
/// regular files relative to the target, at any depth (hidden entries left out).
enum SourceTree {
    static func read(_ sources: String) throws -> [String: [String]] {
        var tree: [String: [String]] = [:]
        for name in try SmallFile.directoryEntries(sources) where isDirectory("\(sources)/\(name)") {
            tree[name] = try files(in: "\(sources)/\(name)", prefix: "")
        }
        return tree
    }

    private static func files(in directory: String, prefix: String) throws -> [String] {
        var found: [String] = []
        for name in try SmallFile.directoryEntries(directory).sorted() {
            let path = "\(directory)/\(name)"
            if isDirectory(path) {
                found += try files(in: path, prefix: "\(prefix)\(name)/")
            } else {
                found.append("\(prefix)\(name)")
            }
        }
        return found
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}
