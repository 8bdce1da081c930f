#!/usr/bin/env bash
# Tests the Debian package in a throwaway Debian root (debootstrap minbase, root
# needed): install, `uplinkd --version` and a `check` smoke test inside it,
# `systemd-analyze verify` of the unit, lintian, an upgrade that keeps an edited
# conffile, then remove and purge leaving nothing behind. Prints a transcript and a
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

first=$(bash packaging/build-deb.sh 1 | tail -n 1)
second=$(bash packaging/build-deb.sh 2 | tail -n 1)
echo "built $first ($(stat -c %s "$first") bytes) and $second"

root=$(mktemp -d /tmp/uplinkd-deb-root.XXXXXX)
cleanup() {
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
smoke=$(in_root /usr/bin/uplinkd check nosuch0 --json || true)
echo "$smoke"
check "check smoke test: no such interface is down" grep -q '"verdict":"down","reason":"no-such-interface"' <<<"$smoke"
check "configuration and hooks installed as conffiles" \
    grep -qx /etc/uplinkd/uplinkd.conf "$root/var/lib/dpkg/info/uplinkd.conffiles"
check "hook library installed, mode 644, not a conffile" bash -c \
    "[ \"\$(stat -c %a '$root/usr/lib/uplinkd/hook-lib.sh')\" = 644 ] &&
     ! grep -q hook-lib '$root/var/lib/dpkg/info/uplinkd.conffiles'"
hook_out=$(in_root env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin UPLINK_EVENT=primary \
    UPLINK_PREVIOUS_PRIMARY=eth0 UPLINK_PRIMARY=wwan0 /etc/uplinkd/hooks.d/90-notify 2>&1 || true)
echo "90-notify: $hook_out"
check "an installed hook finds the hook library" test "$hook_out" = "primary uplink: eth0 -> wwan0"
check "the shipped configuration parses" in_root /usr/bin/uplinkd links --config /etc/uplinkd/uplinkd.conf
check "service enabled for the next boot" test -L "$root/etc/systemd/system/multi-user.target.wants/uplinkd.service"
check "man page installed" test -f "$root/usr/share/man/man8/uplinkd.8.gz"
check "systemd-analyze verify accepts the unit" \
    systemd-analyze verify --man=no --root="$root" /lib/systemd/system/uplinkd.service
lintian_output=$(lintian "$first" 2>&1 | grep -v 'root privileges' || true)
echo "lintian: ${lintian_output:-clean}"
check "lintian reports no errors" bash -c "! grep -q '^E:' <<<\"\$1\"" _ "$lintian_output"

echo "--- upgrade to $(basename "$second") with an edited conffile"
echo "# edited by the admin" >> "$root/etc/uplinkd/uplinkd.conf"
check "dpkg -i upgrade succeeds" in_root dpkg -i --force-confdef --force-confold "/tmp/$(basename "$second")"
check "the edited conffile is kept" grep -q "edited by the admin" "$root/etc/uplinkd/uplinkd.conf"
check "the new version is installed" bash -c "chroot '$root' dpkg-query -W -f='\${Version}' uplinkd | grep -qx 0.1.0-2"

echo "--- remove and purge"
echo "USERNAME=x" > "$root/etc/uplinkd/portal-credentials"
check "dpkg -r succeeds" in_root dpkg -r uplinkd
check "binary and hook library removed, configuration kept" bash -c \
    "[ ! -e '$root/usr/bin/uplinkd' ] && [ ! -e '$root/usr/lib/uplinkd' ] && [ -e '$root/etc/uplinkd/uplinkd.conf' ]"
check "dpkg -P succeeds" in_root dpkg -P uplinkd
check "purge leaves no /etc/uplinkd" test ! -e "$root/etc/uplinkd"
check "purge leaves no unit or enablement link" bash -c \
    "[ ! -e '$root/lib/systemd/system/uplinkd.service' ] && [ ! -L '$root/etc/systemd/system/multi-user.target.wants/uplinkd.service' ]"
check "dpkg forgets the package" bash -c "! chroot '$root' dpkg-query -W uplinkd >/dev/null 2>&1"

echo "deb size $(stat -c %s "$first") bytes; installed size $(dpkg-deb -f "$first" Installed-Size) KiB"
echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
