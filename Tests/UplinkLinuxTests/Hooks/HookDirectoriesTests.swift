import Glibc
import Testing
import UplinkCore
import UplinkLinux

/// Which hooks run: the admin's directory over the vendor one, masks, and the
/// ownership and mode a hook needs.
@Suite("Hook directories")
struct HookDirectoriesTests {
    private func hook(_ directory: TemporaryDirectory, _ name: String, mode: mode_t = 0o755) throws {
        try directory.write(name, "#!/bin/sh\nexit 0\n")
        chmod("\(directory.path)/\(name)", mode)
    }

    @Test func theAdminsEntryOverridesOrMasksTheVendorsOfTheSameName() throws {
        let admin = try TemporaryDirectory()
        let vendor = try TemporaryDirectory()
        defer { admin.remove(); vendor.remove() }
        try hook(vendor, "10-vendor")
        try hook(vendor, "20-both")
        try hook(vendor, "30-masked")
        try hook(admin, "20-both")
        try hook(admin, "40-admin")
        symlink("/dev/null", "\(admin.path)/30-masked")
        try hook(admin, "50-backup~")

        let survey = HookDirectories(directory: admin.path, vendorDirectory: vendor.path).survey()
        #expect(survey.hooks == ["\(vendor.path)/10-vendor", "\(admin.path)/20-both", "\(admin.path)/40-admin"])
        // A mask is a choice, not a problem.
        #expect(survey.problems.isEmpty)
    }

    @Test func hooksOthersMayChangeAreRefusedWithTheReason() throws {
        let admin = try TemporaryDirectory()
        defer { admin.remove() }
        try hook(admin, "10-world", mode: 0o757)
        try hook(admin, "20-group", mode: 0o775)
        try hook(admin, "30-plain", mode: 0o644)
        try hook(admin, "40-good")
        symlink("\(admin.path)/nowhere", "\(admin.path)/50-dangling")

        let survey = HookDirectories(directory: admin.path, vendorDirectory: "/nonexistent").survey()
        #expect(survey.hooks == ["\(admin.path)/40-good"])
        #expect(survey.problems == [
            "hook \(admin.path)/10-world is writable by anyone (mode 757); skipped",
            "hook \(admin.path)/20-group is writable by its group (mode 775); skipped",
            "hook \(admin.path)/30-plain is not executable; skipped",
            "hook \(admin.path)/50-dangling is a link to nothing; skipped",
        ])
    }

    @Test func aHookOwnedBySomeoneElseIsRefused() throws {
        guard geteuid() == 0 else {
            print("skipped: changing a file's owner needs root")
            return
        }
        let admin = try TemporaryDirectory()
        defer { admin.remove() }
        try hook(admin, "10-nobody")
        #expect(chown("\(admin.path)/10-nobody", 65_534, 65_534) == 0)
        let survey = HookDirectories(directory: admin.path, vendorDirectory: "/nonexistent").survey()
        #expect(survey.hooks.isEmpty)
        #expect(survey.problems == ["hook \(admin.path)/10-nobody is owned by uid 65534, not root; skipped"])
    }

    @Test func anAdminDirectoryOthersMayWriteRunsNothingAtAll() throws {
        let admin = try TemporaryDirectory()
        let vendor = try TemporaryDirectory()
        defer { admin.remove(); vendor.remove() }
        try hook(vendor, "30-masked")
        symlink("/dev/null", "\(admin.path)/30-masked")
        chmod(admin.path, 0o777)
        // Its masks cannot be trusted, so the vendor hook it masks must not run either.
        let survey = HookDirectories(directory: admin.path, vendorDirectory: vendor.path).survey()
        #expect(survey.hooks.isEmpty)
        #expect(survey.problems == ["hooks directory \(admin.path) is writable by anyone (mode 777); no hook runs"])
    }

    @Test func aLinkToAFileInADirectoryOthersMayWriteIsRefused() throws {
        let admin = try TemporaryDirectory()
        let elsewhere = try TemporaryDirectory()
        defer { admin.remove(); elsewhere.remove() }
        try hook(elsewhere, "tool")
        chmod(elsewhere.path, 0o777)
        symlink("\(elsewhere.path)/tool", "\(admin.path)/10-linked")
        let survey = HookDirectories(directory: admin.path, vendorDirectory: "/nonexistent").survey()
        #expect(survey.hooks.isEmpty)
        #expect(survey.problems == ["hook \(admin.path)/10-linked lives in \(elsewhere.path), which is writable by anyone (mode 777); skipped"])
    }

    @Test func missingDirectoriesAreNoProblem() {
        let survey = HookDirectories(directory: "/nonexistent/a", vendorDirectory: "/nonexistent/b").survey()
        #expect(survey.hooks.isEmpty && survey.problems.isEmpty)
    }
}
