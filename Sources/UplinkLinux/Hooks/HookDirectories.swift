import Glibc
import UplinkCore

/// Where hooks come from, as NetworkManager's dispatcher does it: the admin's
/// directory (`hooks-dir`, /etc/uplinkd/hooks.d) and the one other packages install
/// into (`vendor-hooks-dir`, /usr/lib/uplinkd/hooks.d). A name in the admin's
/// directory beats the same name in the vendor one, and a link from there to
/// /dev/null masks it. uplinkd's own hooks are in neither: they live in
/// /usr/lib/uplinkd/hooks and run once linked into the admin's directory.
package struct HookDirectories: Sendable, Equatable {
    package var directory: String
    package var vendorDirectory: String

    package init(directory: String, vendorDirectory: String) {
        self.directory = directory
        self.vendorDirectory = vendorDirectory
    }

    package init(_ policy: AgentPolicy) {
        self.init(directory: policy.hooksDirectory, vendorDirectory: policy.vendorHooksDirectory)
    }

    /// What will run and what will not: the hooks in name order, and a sentence for
    /// each entry left out for a reason an admin should hear (`uplinkd config check`
    /// prints them; the runner logs them). Masked hooks are left out silently.
    package func survey() -> (hooks: [String], problems: [String]) {
        var problems: [String] = []
        var chosen: [String: String] = [:]
        // The vendor directory first, so that the admin's entries replace its ones.
        for directory in [vendorDirectory, directory] {
            let entries: [String]
            do {
                entries = try SmallFile.directoryEntries(directory)
            } catch {
                if error.errno != ENOENT { problems.append("hooks directory: \(error)") }
                continue
            }
            // Whoever may add a link there may run any executable as the agent.
            if case .refused(let why) = HookDirectories.checkDirectory(directory) {
                guard directory == self.directory else {
                    if !entries.isEmpty {
                        problems.append("hooks directory \(directory.printableEscaped) \(why); none of its hooks run")
                    }
                    continue
                }
                // The admin's masks cannot be trusted either, so no vendor hook runs.
                problems.append("hooks directory \(directory.printableEscaped) \(why); no hook runs")
                return ([], problems)
            }
            for name in entries where !HookDirectories.isLeftover(name) {
                chosen[name] = "\(directory)/\(name)"
            }
        }
        let names = chosen.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        let hooks = names.compactMap { name -> String? in
            let path = chosen[name]!
            switch HookDirectories.check(path) {
            case .runs: return path
            case .masked, .notAFile: return nil
            case .refused(let why):
                problems.append("hook \(path.printableEscaped) \(why); skipped")
                return nil
            }
        }
        return (hooks, problems)
    }

    /// Editor backups and dpkg's or ucf's copies are never hooks.
    static func isLeftover(_ name: String) -> Bool {
        name.hasSuffix("~") || name.containsSubstring(".dpkg-") || name.hasSuffix(".ucf-dist") || name.hasSuffix(".ucf-old")
    }

    /// What `check` says of one entry.
    package enum Verdict: Equatable, Sendable {
        case runs
        case masked
        case notAFile
        case refused(String)
    }

    /// Whether one entry may run. A hook runs as root with the agent's network
    /// privileges, so whoever may change it may act as the agent: it must belong to
    /// root (or the agent's own user) and be writable by nobody else, and so must the
    /// directory it really lives in (a link may point anywhere). The runner checks
    /// again right before starting each hook.
    package static func check(_ path: String) -> Verdict {
        var info = stat()
        guard stat(path, &info) == 0 else {
            // A dangling link: an enabled hook whose package is gone.
            return lstat(path, &info) == 0 ? .refused("is a link to nothing") : .notAFile
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFCHR where isDevNull(info): return .masked
        default: return .notAFile
        }
        if let problem = whoElseMayWrite(info) { return .refused(problem) }
        guard access(path, X_OK) == 0 else { return .refused("is not executable") }
        if let target = realpath(path, nil) {
            defer { free(target) }
            let resolved = String(cString: target)
            let home = String(resolved[..<(resolved.lastIndex(of: "/") ?? resolved.startIndex)])
            if case .refused(let why) = checkDirectory(home.isEmpty ? "/" : home) {
                return .refused("lives in \(home.printableEscaped), which \(why)")
            }
        }
        return .runs
    }

    /// A directory of hooks must be as safe as the hooks: root's (or the agent's)
    /// and writable by nobody else.
    static func checkDirectory(_ path: String) -> Verdict {
        var info = stat()
        guard stat(path, &info) == 0 else { return .notAFile }
        return whoElseMayWrite(info).map(Verdict.refused) ?? .runs
    }

    /// Why someone besides root (or the agent's own user) could change a file or
    /// directory with this status, or nil when nobody could.
    private static func whoElseMayWrite(_ info: stat) -> String? {
        guard info.st_uid == 0 || info.st_uid == geteuid() else {
            return "is owned by uid \(info.st_uid), not root"
        }
        guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            return "is writable by \(info.st_mode & S_IWOTH != 0 ? "anyone" : "its group") (mode \(String(info.st_mode & 0o7777, radix: 8)))"
        }
        return nil
    }

    private static func isDevNull(_ info: stat) -> Bool {
        var null = stat()
        return stat("/dev/null", &null) == 0 && null.st_rdev == info.st_rdev
    }
}
