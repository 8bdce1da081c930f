#!/usr/bin/env bash
# Tests the Debian package in a throwaway Debian root of a release and architecture
# (root needed): the package's dependencies resolve there, install, `uplinkd
# --version` and a `check` smoke test inside it, `systemd-analyze verify` of the
# units, no hook active after install, lintian, an upgrade that keeps an edited
# conffile, remove and purge leaving nothing behind, and an upgrade from 0.1.0's
# layout that keeps its hooks running. Prints a transcript and a closing
# "N passed, N failed" line.
#
# Usage: bash packaging/test-deb.sh [--arch amd64|arm64] [--release bookworm|trixie]
#                                   [--build-release bookworm|trixie]
#   --arch           default: this machine's
#   --release        the release of the root the package is installed into. Default:
#                    the release the package is built in.
#   --build-release  which package: the one build-deb.sh builds in that release.
#                    Default: build-deb.sh's default for the architecture, the package
#                    shipped for it (amd64: built on bookworm, for Debian 12 and 13;
#                    arm64: built on trixie). So `--arch amd64 --release trixie` tests
#                    the bookworm-built amd64 package on Debian 13.
#   --no-build       test packaging/out's revisions 1 and 2 of the architecture as
#                    they are (the ones an earlier run built), to test the same
#                    package on another release without building it again.
# Builds revisions 1 and 2 with packaging/build-deb.sh first (one build, packed as
# both; unless --no-build). The test root is a
# throwaway overlay of a minimal root kept under ${UPLINKD_ROOTS:-/var/cache/uplinkd-roots}
# (RELEASE-ARCH-minbase, made with debootstrap when missing; packaging/roots.sh); an
# arm64 root runs under qemu-user.
set -euo pipefail
script=$(realpath "$0")
cd "$(dirname "$0")/.."
# shellcheck source=roots.sh
. packaging/roots.sh

arch=$(dpkg --print-architecture)
release=""
build_release=""
build=yes
while [ $# -gt 0 ]; do
    case "$1" in
        --arch) arch=$2; shift 2 ;;
        --release) release=$2; shift 2 ;;
        --build-release) build_release=$2; shift 2 ;;
        --no-build) build=no; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "test-deb: unknown argument $1 (see --help)" >&2; exit 64 ;;
    esac
done
if [ -z "$build_release" ]; then
    if [ "$arch" = amd64 ]; then build_release=bookworm; else build_release=trixie; fi
fi
release=${release:-$build_release}

passed=0
failed=0
check() {
    local what=$1
    shift
    if "$@"; then
        echo "ok: $what"
        passed=$((passed + 1))
    else
        echo "FAILED: $what"
        failed=$((failed + 1))
    fi
}

if [ "$(id -u)" -ne 0 ]; then
    if [ -n "${UPLINKD_REQUIRE_LAB:-}" ]; then
        echo "test-deb: needs root (debootstrap, chroot)" >&2
        exit 1
    fi
    echo "test-deb: needs root (debootstrap, chroot); skipped"
    exit 0
fi
roots_check_arch "$arch"
namespace_args=(--arch "$arch" --release "$release" --build-release "$build_release")
[ "$build" = yes ] || namespace_args+=(--no-build)
roots_enter_namespace "$script" "${namespace_args[@]}"

version=$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/UplinkCore/Support/UplinkVersion.swift)
if [ "$build" = yes ]; then
    built=$(bash packaging/build-deb.sh --arch "$arch" --release "$build_release" --revision 1 --revision 2)
    first=$(tail -n 2 <<<"$built" | head -n 1)
    second=$(tail -n 1 <<<"$built")
    echo "built $first ($(stat -c %s "$first") bytes) and $second on $build_release; testing on $release $arch"
else
    first=packaging/out/uplinkd_$version-1_$arch.deb
    second=packaging/out/uplinkd_$version-2_$arch.deb
    for deb in "$first" "$second"; do
        [ -f "$deb" ] || { echo "test-deb: --no-build: no $deb (run without --no-build first)" >&2; exit 1; }
    done
    echo "testing $first ($(stat -c %s "$first") bytes, built $(date -r "$first" '+%F %T')) and $second on $release $arch"
fi

work=$(mktemp -d /tmp/uplinkd-deb-root.XXXXXX)
netns=""
cleanup() {
    [ -z "$netns" ] || ip netns del "$netns" 2>/dev/null || true
    roots_unmount_all
    roots_remove_work "$work" || true
}
trap cleanup EXIT
# A minimal root with what the tests use; the package's own Depends come from the
# release's archive below (apt-get satisfy), so a new library dependency is tested
# without editing this list.
roots_ensure "$release-$arch-minbase" "$release" "$arch" minbase iproute2,init-system-helpers,procps,systemd
roots_overlay "$roots_path" "$work"
root=$work/root
cp "$first" "$second" "$root/tmp/"
in_root() { chroot "$root" "$@"; }

echo "--- dependencies of $(basename "$first") in $release $arch"
check "the package is for $arch" bash -c \
    "[ \"\$(dpkg-deb -f '$first' Architecture)\" = '$arch' ]"
depends=$(dpkg-deb -f "$first" Depends)
echo "Depends: $depends"
roots_apt "$root" update > "$work/apt.log" 2>&1 || { cat "$work/apt.log"; exit 1; }
satisfy() {
    roots_apt "$root" -y satisfy "$depends" > "$work/satisfy.log" 2>&1 || { cat "$work/satisfy.log"; return 1; }
}
check "the package's dependencies resolve in $release (apt-get satisfy)" satisfy
if [ "$failed" -ne 0 ]; then
    echo "package: $passed passed, $failed failed"
    exit 1
fi

echo "--- install $(basename "$first")"
check "dpkg -i succeeds without systemd running" in_root dpkg -i "/tmp/$(basename "$first")"
version_out=$(in_root /usr/bin/uplinkd --version 2>&1) && version_status=0 || version_status=$?
sed 's/^/uplinkd --version: /' <<<"$version_out"
check "uplinkd --version runs in the root" test "$version_status" -eq 0
case "$arch" in amd64) machine="X86-64" ;; arm64) machine="AArch64" ;; esac
check "the packaged binary is an $arch ($machine) program" bash -c \
    "readelf -h '$root/usr/bin/uplinkd' | grep -q 'Machine:.*$machine'"
# Packed relative relocations need glibc 2.36's loader, which only the binary's
# GLIBC_ABI_DT_RELR says (debian/rules adds the Depends dpkg-shlibdeps misses).
libc_minimum=$(sed -n 's/.*libc6 (>= \([^)]*\)).*/\1/p' <<<"$depends")
check "Depends asks for libc6 (>= 2.36) when the binary packs relative relocations" bash -c \
    "! readelf -V '$root/usr/bin/uplinkd' | grep -q GLIBC_ABI_DT_RELR ||
     dpkg --compare-versions '${libc_minimum:-0}' ge 2.36"
check "every library the binary needs resolves in $release (ldd)" bash -c \
    "out=\$(chroot '$root' ldd /usr/bin/uplinkd) && ! grep -q 'not found' <<<\"\$out\""
# Built with --disable-local-rpath: a search path beside the binary would be tried
# first for every library at every start.
check "the packaged binary names no library search path (RUNPATH)" \
    bash -c "! readelf -d '$root/usr/bin/uplinkd' | grep -qE 'RUNPATH|RPATH'"
# GCC's unwinder is linked from libgcc_eh.a (Package.swift: -static-libgcc); only the
# static release build would name libgcc_s.so.1 (a debug build's linker drops it).
check "the packaged binary does not load libgcc_s.so.1" \
    bash -c "! readelf -d '$root/usr/bin/uplinkd' | grep -q 'NEEDED.*libgcc_s'"
# CStartShim keeps the Swift runtime's argv lookup (which reads /proc/self/maps at
# every start) out of the static binary; the path is its only use of that file.
check "the packaged binary does not read /proc/self/maps to find its arguments" \
    bash -c "! grep -qa /proc/self/maps '$root/usr/bin/uplinkd'"
smoke=$(in_root /usr/bin/uplinkd check nosuch0 --json || true)
echo "$smoke"
check "check smoke test: no such interface is down" grep -q '"verdict":"down","reason":"no-such-interface"' <<<"$smoke"
check "configuration installed as a conffile" \
    grep -qx /etc/uplinkd/uplinkd.conf "$root/var/lib/dpkg/info/uplinkd.conffiles"
check "shipped hooks installed under /usr/lib/uplinkd/hooks, mode 755" bash -c \
    "for hook in 50-route-failover 60-portal-login 90-notify; do
         [ \"\$(stat -c %a '$root'/usr/lib/uplinkd/hooks/\$hook)\" = 755 ] || exit 1
     done"
check "no hook is active after install" bash -c \
    "[ -d '$root/etc/uplinkd/hooks.d' ] && [ -d '$root/usr/lib/uplinkd/hooks.d' ] &&
     [ -z \"\$(find '$root/etc/uplinkd/hooks.d' '$root/usr/lib/uplinkd/hooks.d' -mindepth 1)\" ]"
survey=$(in_root /usr/bin/uplinkd config check 2>&1 || true)
echo "config check: $survey"
check "config check counts no hook after install" grep -q "; 0 hooks in /etc/uplinkd/hooks.d" <<<"$survey"
in_root ln -s /usr/lib/uplinkd/hooks/90-notify /etc/uplinkd/hooks.d/90-notify
survey=$(in_root /usr/bin/uplinkd config check 2>&1 || true)
check "a hook linked into /etc/uplinkd/hooks.d is enabled" grep -q "; 1 hooks in /etc/uplinkd/hooks.d" <<<"$survey"
rm "$root/etc/uplinkd/hooks.d/90-notify"
check "hook library installed, mode 644, not a conffile" bash -c \
    "[ \"\$(stat -c %a '$root/usr/lib/uplinkd/hook-lib.sh')\" = 644 ] &&
     ! grep -q hook-lib '$root/var/lib/dpkg/info/uplinkd.conffiles'"
hook_out=$(in_root env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin UPLINK_EVENT=outage UPLINK_OUTAGE_DURATION_MS=30512 \
    UPLINK_OUTAGE_REASONS=eth0:no-carrier UPLINK_PRIMARY=wwan0 /usr/lib/uplinkd/hooks/90-notify 2>&1 || true)
echo "90-notify: $hook_out"
check "an installed hook finds the hook library" test "$hook_out" = "site offline for 31 s (eth0:no-carrier); primary now wwan0"
check "the shipped configuration parses" in_root /usr/bin/uplinkd links --config /etc/uplinkd/uplinkd.conf
check "service enabled for the next boot" test -L "$root/etc/systemd/system/multi-user.target.wants/uplinkd.service"
man_pages="man8/uplinkd.8 man5/uplinkd.conf.5 man5/uplinkd-state.5 man5/uplinkd-journal.5 man7/uplinkd-hooks.7"
check "man pages uplinkd(8), uplinkd.conf(5), uplinkd-state(5), uplinkd-journal(5), uplinkd-hooks(7) installed" bash -c \
    "for page in $man_pages; do [ -f '$root/usr/share/man/'\$page.gz ] || { echo \"missing: \$page\"; exit 1; }; done"
# As man(1) renders them, with every groff warning on: a page that warns shows its
# reader something else than was written (a word lost to an unknown macro, say).
check "every man page renders without a groff warning" bash -c \
    "for page in $man_pages; do
         warnings=\$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings=w -E UTF-8 -l -Tutf8 -Z \
             '$root/usr/share/man/'\$page.gz 2>&1 >/dev/null)
         [ -z \"\$warnings\" ] || { echo \"\$page: \$warnings\"; exit 1; }
     done"
check "the state file's reader example installed" \
    test -f "$root/usr/share/doc/uplinkd/examples/state-reader.sh"
check "bash completion installed and loads" in_root bash -c \
    '. /usr/share/bash-completion/completions/uplinkd && complete -p uplinkd | grep -q -- "-F _uplinkd"'
check "the unit's reload runs config check before it signals" bash -c \
    "grep -A1 -x 'ExecReload=/usr/bin/uplinkd config check' '$root/lib/systemd/system/uplinkd.service' |
     grep -qx 'ExecReload=/bin/kill -HUP \\\$MAINPID'"
check "systemd-analyze verify accepts the unit" \
    systemd-analyze verify --man=no --root="$root" /lib/systemd/system/uplinkd.service
check "systemd-analyze verify accepts the wait-online unit" \
    systemd-analyze verify --man=no --root="$root" /lib/systemd/system/uplinkd-wait-online.service
check "wait-online unit installed but not enabled" bash -c \
    "[ -f '$root/lib/systemd/system/uplinkd-wait-online.service' ] &&
     [ ! -e '$root/etc/systemd/system/network-online.target.wants/uplinkd-wait-online.service' ]"
# This machine's lintian (Debian 12's) on the binary package and the source package.
dsc=${second%_*.deb}.dsc
lintian_output=$(lintian "$second" "$dsc" 2>&1 | grep -v 'root privileges' || true)
echo "lintian $(lintian --version | cut -d' ' -f2): ${lintian_output:-clean}"
check "lintian reports no errors" bash -c "! grep -q '^E:' <<<\"\$1\"" _ "$lintian_output"
check "lintian says nothing of the manual pages" bash -c \
    "! grep -E '^[EWI]: .*(manpage|man-page|manual-page|groff|whatis)' <<<\"\$1\"" _ "$lintian_output"

echo "--- upgrade to $(basename "$second") with an edited conffile"
echo "# edited by the admin" >> "$root/etc/uplinkd/uplinkd.conf"
check "dpkg -i upgrade succeeds" in_root dpkg -i --force-confdef --force-confold "/tmp/$(basename "$second")"
check "the edited conffile is kept" grep -q "edited by the admin" "$root/etc/uplinkd/uplinkd.conf"
check "the new version is installed" bash -c "chroot '$root' dpkg-query -W -f='\${Version}' uplinkd | grep -qx \"\$1-2\"" _ "$version"

echo "--- remove and purge"
echo "USERNAME=x" > "$root/etc/uplinkd/portal-credentials"
# uplinkd's routing entries, as the route-failover hook leaves them with
# keep-routes-on-stop: the removal takes them along. In a namespace of the test's
# own, so the machine's own rules are never touched.
netns="uplinkd-deb-$$"
ip netns add "$netns"
ip -n "$netns" link set lo up
ip -n "$netns" rule add pref 32500 lookup main suppress_prefixlength 0 proto 77
ip -n "$netns" rule add pref 32501 lookup 7077 proto 77
ip -n "$netns" route add unreachable default table 7077 proto 77
check "dpkg -r succeeds" ip netns exec "$netns" chroot "$root" dpkg -r uplinkd
if [ "$arch" = "$(dpkg --print-architecture)" ]; then
    check "the removal took uplinkd's rules and table along" bash -c \
        "[ -z \"\$(ip -n '$netns' rule show pref 32500; ip -n '$netns' rule show pref 32501)\" ] &&
         [ -z \"\$(ip -n '$netns' route show table 7077 2>/dev/null)\" ]"
else
    # qemu-user passes no routing-rule messages (RTM_GETRULE, RTM_DELRULE) on to the
    # kernel, so the emulated uplinkd cannot list its rules, and removes nothing.
    echo "skipped: the removal of uplinkd's rules and table: qemu-user does not pass routing-rule messages on (checked by the $(dpkg --print-architecture) package's test)"
fi
ip netns del "$netns"
netns=""
check "binary and hook library removed, configuration kept" bash -c \
    "[ ! -e '$root/usr/bin/uplinkd' ] && [ ! -e '$root/usr/lib/uplinkd' ] && [ -e '$root/etc/uplinkd/uplinkd.conf' ]"
# An admin who enabled wait-online: purge must take the enablement link too.
mkdir -p "$root/etc/systemd/system/network-online.target.wants"
ln -s /lib/systemd/system/uplinkd-wait-online.service \
    "$root/etc/systemd/system/network-online.target.wants/uplinkd-wait-online.service"
check "dpkg -P succeeds" in_root dpkg -P uplinkd
check "purge leaves no /etc/uplinkd" test ! -e "$root/etc/uplinkd"
check "purge leaves no unit or enablement link" bash -c \
    "[ ! -e '$root/lib/systemd/system/uplinkd.service' ] && [ ! -L '$root/etc/systemd/system/multi-user.target.wants/uplinkd.service' ]"
check "purge leaves no wait-online unit or enablement link" bash -c \
    "[ ! -e '$root/lib/systemd/system/uplinkd-wait-online.service' ] &&
     [ ! -L '$root/etc/systemd/system/network-online.target.wants/uplinkd-wait-online.service' ]"
check "dpkg forgets the package" bash -c "! chroot '$root' dpkg-query -W uplinkd >/dev/null 2>&1"

echo "--- upgrade from 0.1.0, whose hooks were conffiles in /etc/uplinkd/hooks.d"
# A stand-in for 0.1.0 with its layout: the hooks as conffiles where they ran.
old_stage=$(mktemp -d)
mkdir -p "$old_stage/DEBIAN" "$old_stage/etc/uplinkd/hooks.d"
for hook in 50-route-failover 60-portal-login 90-notify; do
    install -m 0755 "hooks/$hook" "$old_stage/etc/uplinkd/hooks.d/$hook"
    echo "/etc/uplinkd/hooks.d/$hook" >> "$old_stage/DEBIAN/conffiles"
done
printf 'Package: uplinkd\nVersion: 0.1.0-1\nArchitecture: %s\nMaintainer: test <t@uplinkd.invalid>\nDescription: 0.1.0 layout stand-in\n' \
    "$arch" > "$old_stage/DEBIAN/control"
dpkg-deb --root-owner-group --build "$old_stage" "$root/tmp/uplinkd-old.deb" >/dev/null
rm -rf "$old_stage"
check "the 0.1.0 stand-in installs" in_root dpkg -i /tmp/uplinkd-old.deb
echo "# edited by the admin" >> "$root/etc/uplinkd/hooks.d/60-portal-login"
check "dpkg -i upgrade from 0.1.0 succeeds" in_root dpkg -i --force-confdef --force-confold "/tmp/$(basename "$second")"
check "unmodified 0.1.0 hooks stay enabled, as links to the new code" bash -c \
    "[ \"\$(readlink '$root/etc/uplinkd/hooks.d/50-route-failover')\" = /usr/lib/uplinkd/hooks/50-route-failover ] &&
     [ \"\$(readlink '$root/etc/uplinkd/hooks.d/90-notify')\" = /usr/lib/uplinkd/hooks/90-notify ]"
check "an edited 0.1.0 hook is kept as the admin's own" bash -c \
    "[ ! -L '$root/etc/uplinkd/hooks.d/60-portal-login' ] && grep -q 'edited by the admin' '$root/etc/uplinkd/hooks.d/60-portal-login'"
survey=$(in_root /usr/bin/uplinkd config check 2>&1 || true)
echo "config check: $survey"
check "all three hooks still run after the upgrade" grep -q "; 3 hooks in /etc/uplinkd/hooks.d" <<<"$survey"
check "dpkg -P after the upgrade succeeds" in_root dpkg -P uplinkd
check "purge leaves no /etc/uplinkd after the upgrade" test ! -e "$root/etc/uplinkd"

echo "deb size $(stat -c %s "$first") bytes; installed size $(dpkg-deb -f "$first" Installed-Size) KiB"
echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
