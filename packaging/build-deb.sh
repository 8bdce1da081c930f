#!/usr/bin/env bash
# Builds uplinkd_VERSION_ARCH.deb from a release build (static Swift standard
# library, stripped) into packaging/out/. Depends comes from the binary's NEEDED
# libraries through dpkg-shlibdeps. Needs: swift, dpkg-dev, binutils.
#
# Usage: bash packaging/build-deb.sh [REVISION]     (default revision 1)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

revision=${1:-1}
version=$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/UplinkCore/Support/UplinkVersion.swift)
arch=$(dpkg --print-architecture)
out=packaging/out
stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/lib/uplinkd/hooks" "$stage/usr/lib/uplinkd/hooks.d" \
    "$stage/etc/uplinkd/hooks.d" "$stage/etc/uplinkd/uplinkd.conf.d" \
    "$stage/lib/systemd/system" "$stage/usr/share/doc/uplinkd" "$stage/usr/share/man/man8"

swift build -c release --static-swift-stdlib --disable-local-rpath >&2
install -m 0755 .build/release/uplinkd "$stage/usr/bin/uplinkd"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/uplinkd"

install -m 0644 config/uplinkd.conf "$stage/etc/uplinkd/uplinkd.conf"
# The shipped hooks are code under /usr and run only once enabled by a link in
# /etc/uplinkd/hooks.d (installing the package changes no route). The agent also
# runs /usr/lib/uplinkd/hooks.d, which is for other packages' hooks: empty here.
for hook in hooks/[0-9]*; do
    install -m 0755 "$hook" "$stage/usr/lib/uplinkd/hooks/$(basename "$hook")"
done
# The helpers the hooks source: code, not configuration (under /usr, not a conffile).
install -m 0644 hooks/lib/uplinkd-hook.sh "$stage/usr/lib/uplinkd/hook-lib.sh"
install -m 0644 packaging/debian/uplinkd.service "$stage/lib/systemd/system/uplinkd.service"
# Opt-in (not enabled by the postinst): holds network-online.target for an uplink.
install -m 0644 packaging/debian/uplinkd-wait-online.service "$stage/lib/systemd/system/uplinkd-wait-online.service"
install -m 0644 packaging/debian/copyright "$stage/usr/share/doc/uplinkd/copyright"
install -m 0644 README.md "$stage/usr/share/doc/uplinkd/README.md"
# The shipped hooks' manual (README.md keeps the hook contract and links to it).
install -m 0644 hooks/README.md "$stage/usr/share/doc/uplinkd/hooks.md"
gzip -9n < packaging/debian/uplinkd.8 > "$stage/usr/share/man/man8/uplinkd.8.gz"
chmod 0644 "$stage/usr/share/man/man8/uplinkd.8.gz"
mkdir -p "$stage/usr/share/man/man5"
gzip -9n < packaging/debian/uplinkd.conf.5 > "$stage/usr/share/man/man5/uplinkd.conf.5.gz"
chmod 0644 "$stage/usr/share/man/man5/uplinkd.conf.5.gz"
install -D -m 0644 packaging/bash-completion/uplinkd "$stage/usr/share/bash-completion/completions/uplinkd"
gzip -9n < packaging/debian/changelog > "$stage/usr/share/doc/uplinkd/changelog.Debian.gz"
chmod 0644 "$stage/usr/share/doc/uplinkd/changelog.Debian.gz"
for script in postinst prerm postrm; do
    install -m 0755 "packaging/debian/$script" "$stage/DEBIAN/$script"
done
(cd "$stage" && find etc -type f | sed 's#^#/#' | sort) > "$stage/DEBIAN/conffiles"

# Depends from the binary's NEEDED entries (dpkg-shlibdeps wants a debian/control).
shlib_dir=$(mktemp -d)
trap 'rm -rf "$shlib_dir"' EXIT
mkdir -p "$shlib_dir/debian"
printf 'Source: uplinkd\n\nPackage: uplinkd\nArchitecture: any\n' > "$shlib_dir/debian/control"
binary=$(realpath "$stage/usr/bin/uplinkd")
depends=$(cd "$shlib_dir" && dpkg-shlibdeps -O -e "$binary" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# iproute2 for the hooks, procps for the unit's ExecReload (kill), libsystemd0 for
# sd-bus (ModemManager), which the binary loads when it first opens the system bus
# instead of naming it in NEEDED.
depends="$depends, iproute2, procps, libsystemd0"
# Packed relative relocations (Package.swift) need glibc 2.36's loader; dpkg-shlibdeps
# counts symbols only, so it misses that version.
if readelf -V "$binary" | grep -q GLIBC_ABI_DT_RELR; then
    depends=$(printf '%s' "$depends" | sed -E 's/libc6 \(>= [0-9.]+\)/libc6 (>= 2.36)/')
    case "$depends" in *"libc6 (>= 2.36)"*) ;; *) depends="libc6 (>= 2.36), $depends" ;; esac
fi

installed_kib=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version-$revision/" -e "s/@ARCH@/$arch/" \
    -e "s/@INSTALLED_SIZE@/$installed_kib/" -e "s/@DEPENDS@/$depends/" \
    packaging/debian/control.in > "$stage/DEBIAN/control"
(cd "$stage" && find usr lib etc -type f -print0 | sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"

deb=$out/uplinkd_${version}-${revision}_${arch}.deb
dpkg-deb --root-owner-group --build "$stage" "$deb" >&2
echo "$deb"
