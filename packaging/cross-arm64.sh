#!/usr/bin/env bash
# Cross-compiles uplinkd for arm64 on an amd64 machine in minutes (the package's
# native build under qemu-user takes about an hour): Debian 13's own swiftlang (the
# amd64 compiler, with its clang and ld.lld) builds against an arm64 Debian 13 root
# used as the sysroot (its swiftlang gives the aarch64 Swift runtime and modules, its
# -dev packages the headers and libraries). Leaves packaging/out/cross-arm64/uplinkd
# and prints its `--version` run under qemu-user; the wall time of the compile is
# printed too. For developers and CI-like checks: the .deb for gateways is still
# `build-deb.sh --arch arm64` (a native build, as a build farm makes it).
#
# Usage: bash packaging/cross-arm64.sh        (root: chroot, mounts; binfmt_misc for
#                                              the run under qemu, see .ci/setup)
#
# The roots are build-deb.sh's ($UPLINKD_ROOTS/trixie-amd64 and trixie-arm64, made
# with debootstrap when missing), each used through a throwaway overlay (roots.sh);
# what is missing in them is installed there with apt for this run only.
#
# Why the flags (SwiftPM 6.0 on Linux):
#   -Xswiftc -sdk    SwiftPM hands --sdk to clang only (as --sysroot); without swiftc's
#                    own -sdk the importer maps glibc's module onto the build root's
#                    /usr/include, not the sysroot's, and `import Glibc` fails with
#                    "missing required module 'SwiftGlibc'".
#   -resource-dir    the sysroot's lib/swift_static: with --static-swift-stdlib and an
#                    explicit resource dir the driver looks there for the static runtime
#                    and its static-stdlib-args.lnk (lib/swift has neither).
#   PKG_CONFIG_*     SwiftPM reads the .pc files itself: the arm64 ones, their -I and -L
#                    prefixed with the sysroot.
set -euo pipefail
script=$(realpath "$0")
cd "$(dirname "$0")/.."
# shellcheck source=roots.sh
. packaging/roots.sh

if [ "$(id -u)" -ne 0 ]; then
    echo "cross-arm64: needs root (debootstrap, chroot, mounts)" >&2
    exit 1
fi
roots_enter_namespace "$script" "$@"

# The host needs the compiler; the sysroot what debian/control's Build-Depends give a
# native build, and libstdc++'s static library (Package.swift links libstdc++.a
# through packaging/link/libstdc++.so), which a native build has from build-essential.
host_packages=(swiftlang libc6-dev pkg-config)
target_packages=(swiftlang libc6-dev libgcc-14-dev libstdc++-14-dev libcurl4-openssl-dev libssl-dev
                 libnl-3-dev libnl-route-3-dev libc-ares-dev libpcre2-dev libsystemd-dev libmosquitto-dev)

work=$(mktemp -d "${TMPDIR:-/tmp}/uplinkd-cross.XXXXXX")
cleanup() {
    roots_unmount_all
    roots_remove_work "$work" || true
}
trap cleanup EXIT

roots_ensure trixie-amd64 trixie amd64 buildd
roots_overlay "$roots_path" "$work/host"
host=$work/host/root
roots_ensure trixie-arm64 trixie arm64 buildd
roots_overlay "$roots_path" "$work/target"
sysroot=$work/target/root

install_missing() {   # install_missing ROOT PACKAGE...
    local root=$1 missing=() package
    shift
    for package in "$@"; do
        chroot "$root" dpkg-query -W -f '${Status}\n' "$package" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$package")
    done
    ((${#missing[@]})) || return 0
    echo "cross-arm64: installing ${missing[*]} in ${root#"$work"/}" >&2
    roots_write_sources "$root" trixie
    { roots_apt "$root" update && roots_apt "$root" -y install "${missing[@]}"; } >&2
}
install_missing "$host" "${host_packages[@]}"
install_missing "$sysroot" "${target_packages[@]}"

# The tree as build-deb.sh takes it: git's files with uncommitted changes.
mkdir -p "$host/src" "$host/sysroot"
roots_export_tree "$host/src"
roots_mount --bind "$sysroot" "$host/sysroot"
mount -o remount,bind,ro "$host/sysroot"

pc=/sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:/sysroot/usr/share/pkgconfig
build=(swift build -c release --static-swift-stdlib --disable-local-rpath --product uplinkd
       --triple aarch64-unknown-linux-gnu --sdk /sysroot
       -Xswiftc -sdk -Xswiftc /sysroot
       -Xswiftc -resource-dir -Xswiftc /sysroot/usr/libexec/swift/lib/swift_static)
in_host() {
    chroot "$host" env -i PATH=/usr/libexec/swift/bin:/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 \
        PKG_CONFIG_SYSROOT_DIR=/sysroot PKG_CONFIG_PATH=$pc PKG_CONFIG_LIBDIR=$pc \
        sh -c 'cd /src && exec "$@"' sh "$@"
}
echo "cross-arm64: $(in_host swift --version 2>&1 | head -n 1)" >&2
started=$SECONDS
if ! in_host "${build[@]}" > "$work/build.log" 2>&1; then
    tail -n 40 "$work/build.log" >&2
    echo "cross-arm64: the build failed" >&2
    exit 1
fi
seconds=$((SECONDS - started))
mkdir -p packaging/out/cross-arm64
binary=packaging/out/cross-arm64/uplinkd
install -m 0755 "$host$(in_host "${build[@]}" --show-bin-path)/uplinkd" "$binary"
cp "$work/build.log" packaging/out/cross-arm64/build.log
echo "cross-arm64: compiled in $seconds s: $binary" >&2
file "$binary"
QEMU_LD_PREFIX=$sysroot "$binary" --version
