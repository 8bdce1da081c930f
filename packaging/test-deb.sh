#!/usr/bin/env bash
# Tests the Debian package in a throwaway Debian root (debootstrap minbase, root
# needed): install, `uplinkd --version` and a `check` smoke test inside it,
# `systemd-analyze verify` of the unit, no hook active after install, lintian, an
# upgrade that keeps an edited conffile, remove and purge leaving nothing behind, and
# an upgrade from 0.1.0's layout that keeps its hooks running. Prints a transcript and a
# closing "N passed, N failed" line.
#
# Usage: bash packaging/test-deb.sh        (builds revisions 1 and 2 first)
set -euo pipefail
cd "$(dirname "$0")/.."

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

version=$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/UplinkCore/Support/UplinkVersion.swift)
first=$(bash packaging/build-deb.sh 1 | tail -n 1)
second=$(bash packaging/build-deb.sh 2 | tail -n 1)
echo "built $first ($(stat -c %s "$first") bytes) and $second"

root=$(mktemp -d /tmp/uplinkd-deb-root.XXXXXX)
netns=""
cleanup() {
    [ -z "$netns" ] || ip netns del "$netns" 2>/dev/null || true
    for mount in "$root/proc" "$root/sys"; do
        mountpoint -q "$mount" && umount "$mount"
    done
    rm -rf "$root"
}
trap cleanup EXIT
mirror=$(sed -n 's/^URIs: //p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
# The root gets the package's own Depends (as dpkg-shlibdeps computed them: libcurl4,
# libnl, libc-ares2, ...), so a new library dependency is tested without editing
# this list, plus what the smoke tests use.
depends=$(dpkg-deb -f "$first" Depends | tr ',' '\n' | sed 's/[|(].*//; s/ //g' | grep -v '^$' | paste -sd, -)
debootstrap --variant=minbase --include="$depends,iproute2,init-system-helpers,procps,systemd" \
    bookworm "$root" "${mirror:-http://deb.debian.org/debian}" > "$root.debootstrap.log" 2>&1 ||
    { cat "$root.debootstrap.log"; exit 1; }
rm -f "$root.debootstrap.log"
mount -t proc proc "$root/proc"
cp "$first" "$second" "$root/tmp/"
in_root() { chroot "$root" "$@"; }

echo "--- install $(basename "$first")"
check "dpkg -i succeeds without systemd running" in_root dpkg -i "/tmp/$(basename "$first")"
check "uplinkd --version runs in the root" in_root /usr/bin/uplinkd --version
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
hook_out=$(in_root env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin UPLINK_EVENT=primary \
    UPLINK_PREVIOUS_PRIMARY=eth0 UPLINK_PRIMARY=wwan0 /usr/lib/uplinkd/hooks/90-notify 2>&1 || true)
echo "90-notify: $hook_out"
check "an installed hook finds the hook library" test "$hook_out" = "primary uplink: eth0 -> wwan0"
check "the shipped configuration parses" in_root /usr/bin/uplinkd links --config /etc/uplinkd/uplinkd.conf
check "service enabled for the next boot" test -L "$root/etc/systemd/system/multi-user.target.wants/uplinkd.service"
check "man pages uplinkd(8) and uplinkd.conf(5) installed" bash -c \
    "[ -f '$root/usr/share/man/man8/uplinkd.8.gz' ] && [ -f '$root/usr/share/man/man5/uplinkd.conf.5.gz' ]"
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
lintian_output=$(lintian "$first" 2>&1 | grep -v 'root privileges' || true)
echo "lintian: ${lintian_output:-clean}"
check "lintian reports no errors" bash -c "! grep -q '^E:' <<<\"\$1\"" _ "$lintian_output"

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
check "the removal took uplinkd's rules and table along" bash -c \
    "[ -z \"\$(ip -n '$netns' rule show pref 32500; ip -n '$netns' rule show pref 32501)\" ] &&
     [ -z \"\$(ip -n '$netns' route show table 7077 2>/dev/null)\" ]"
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
    "$(dpkg --print-architecture)" > "$old_stage/DEBIAN/control"
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
