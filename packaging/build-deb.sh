#!/usr/bin/env bash
# Builds uplinkd's Debian source package (.dsc) from this tree and then its binary
# package with dpkg-buildpackage in a clean Debian root of the release and
# architecture asked for; leaves them in packaging/out/ and prints the .deb's path
# as the last line of stdout (everything else goes to stderr).
#
# Usage: bash packaging/build-deb.sh [--arch amd64|arm64] [--release trixie|bookworm]
#                                    [--revision N]
#   --arch      default: this machine's (dpkg --print-architecture)
#   --release   the root the package is built in. Default: bookworm for amd64, trixie
#               for arm64.
#               bookworm: Debian 12 has no Swift package, so the build uses the build
#                 profile pkg.uplinkd.external-swift with this machine's /opt/swift
#                 bind-mounted read-only into the root (amd64 only: /opt/swift is an
#                 x86_64 toolchain). Built against Debian 12's libraries, the package
#                 installs on Debian 12 and 13 alike.
#               trixie: Debian's swiftlang. Built against Debian 13's 64-bit-time
#                 libraries (libcurl4t64, ...), the package installs on 13 and later.
#   --revision  the Debian revision (default: debian/changelog's own); another one is
#               written into the top changelog entry of the build's copy. Given more
#               than once, each revision is built in turn in the same root, the later
#               ones from the first one's compiled tree (their sources differ in
#               debian/changelog only), and each .deb's path is printed, the last
#               revision's last.
#   --source    only the source package (no root, no compile): leaves the .dsc, the orig
#               tarball and the debian tarball in packaging/out/ and prints the .dsc's
#               path (each revision's): what a build farm (sbuild, pbuilder) takes
#               unchanged.
#
# The source: the tree as it is (git's files at HEAD plus uncommitted changes and
# untracked files that are not ignored), as the orig tarball uplinkd_VERSION.orig.tar.xz
# (made the same, byte for byte, from the same tree), with packaging/debian as debian/.
# The root: ${UPLINKD_ROOTS:-/var/cache/uplinkd-roots}/RELEASE-ARCH, made with
# debootstrap when missing, used through a throwaway overlay (packaging/roots.sh); the
# build dependencies are installed there from the .dsc's Build-Depends each time
# (apt-get build-dep), the package is unpacked from the .dsc and built as an
# unprivileged user with HOME=/nonexistent and no network, as sbuild would. Needs root, dpkg-dev,
# debootstrap; an arm64 build needs qemu-user-static and binfmt_misc (.ci/setup).
set -euo pipefail
script=$(realpath "$0")
cd "$(dirname "$0")/.."
# shellcheck source=roots.sh
. packaging/roots.sh

arch=$(dpkg --print-architecture)
release=""
revisions=()
source_only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --arch) arch=$2; shift 2 ;;
        --release) release=$2; shift 2 ;;
        --revision) revisions+=("$2"); shift 2 ;;
        --source) source_only=yes; shift ;;
        [0-9]*) revisions+=("$1"); shift ;;   # the old `build-deb.sh REVISION`
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-deb: unknown argument $1 (see --help)" >&2; exit 64 ;;
    esac
done
case "$arch" in amd64|arm64) ;; *) echo "build-deb: --arch amd64 or arm64, not $arch" >&2; exit 64 ;; esac
for revision in "${revisions[@]}"; do
    if ! [[ "$revision" =~ ^[0-9][0-9A-Za-z.+~]*$ ]]; then
        echo "build-deb: --revision: a Debian revision such as 2, not $revision" >&2
        exit 64
    fi
done
if [ -z "$release" ]; then
    if [ "$arch" = amd64 ]; then release=bookworm; else release=trixie; fi
fi
profiles=""
case "$release" in
    trixie) ;;
    bookworm)
        if [ "$arch" != amd64 ]; then
            echo "build-deb: no Swift for bookworm $arch (Debian 12 has no Swift package and" \
                "/opt/swift is an x86_64 toolchain): build $arch with --release trixie" >&2
            exit 64
        fi
        profiles=pkg.uplinkd.external-swift
        if [ -z "$source_only" ] && [ ! -x /opt/swift/usr/bin/swift ]; then
            echo "build-deb: a bookworm build needs a Swift toolchain at /opt/swift (README, Quick start)" >&2
            exit 1
        fi
        ;;
    *) echo "build-deb: --release trixie or bookworm, not $release" >&2; exit 64 ;;
esac
if [ -z "$source_only" ] && [ "$(id -u)" -ne 0 ]; then
    echo "build-deb: needs root (debootstrap, chroot, mounts)" >&2
    exit 1
fi
for tool in dpkg-source debootstrap unshare xz; do
    command -v "$tool" >/dev/null || { echo "build-deb: $tool missing (bash .ci/setup installs it)" >&2; exit 1; }
done
if [ -z "$source_only" ]; then
    roots_check_arch "$arch"
    namespace_args=(--arch "$arch" --release "$release")
    for revision in "${revisions[@]}"; do namespace_args+=(--revision "$revision"); done
    roots_enter_namespace "$script" "${namespace_args[@]}"
fi

started=$SECONDS
changelog_version=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
upstream=${changelog_version%-*}
own_revision=${changelog_version##*-}
((${#revisions[@]})) || revisions=("$own_revision")
code_version=$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/UplinkCore/Support/UplinkVersion.swift)
if [ "$code_version" != "$upstream" ]; then
    echo "build-deb: debian/changelog says $upstream, UplinkVersion.swift $code_version: add a changelog entry" >&2
    exit 1
fi
versions=()
for revision in "${revisions[@]}"; do versions+=("$upstream-$revision"); done
out=packaging/out
mkdir -p "$out"
echo "build-deb: uplinkd ${versions[*]} for $release $arch${profiles:+ (profile $profiles)}" >&2

work=$(mktemp -d "${TMPDIR:-/tmp}/uplinkd-deb.XXXXXX")
cleanup() {
    roots_unmount_all
    roots_remove_work "$work" || true
}
trap cleanup EXIT

# --- the source package
src=$work/source/uplinkd-$upstream
mkdir -p "$src"
roots_export_tree "$src"
# The same tree gives the same tarball: names sorted, owners and times fixed (the
# changelog's date, as SOURCE_DATE_EPOCH).
epoch=$(dpkg-parsechangelog -l packaging/debian/changelog -S Timestamp)
orig=uplinkd_$upstream.orig.tar.xz
tar --sort=name --mtime="@$epoch" --clamp-mtime --owner=0 --group=0 --numeric-owner \
    --format=gnu -C "$work/source" -cf - "uplinkd-$upstream" | xz -6 -T1 > "$work/source/$orig"
# One .dsc per revision, with the same orig tarball.
source_files() { echo "$work/source/uplinkd_$1.dsc" "$work/source/$orig" "$work/source/uplinkd_$1.debian.tar.xz"; }
for version in "${versions[@]}"; do
    rm -rf --one-file-system "$src/debian"
    cp -a packaging/debian "$src/debian"
    if [ "$version" != "$changelog_version" ]; then
        sed -i "1s/^uplinkd ($changelog_version)/uplinkd ($version)/" "$src/debian/changelog"
    fi
    (cd "$work/source" && dpkg-source --build "uplinkd-$upstream") >&2
done
rm -rf --one-file-system "$src"
if [ -n "$source_only" ]; then
    for version in "${versions[@]}"; do
        # shellcheck disable=SC2046
        cp $(source_files "$version") "$out/"
        echo "build-deb: source package uplinkd_$version.dsc in $((SECONDS - started)) s" >&2
        echo "$out/uplinkd_$version.dsc"
    done
    exit 0
fi
dsc=uplinkd_${versions[0]}.dsc

# --- the root
root_name=$release-$arch
apt_profiles=()
[ -z "$profiles" ] || apt_profiles=(--build-profiles="$profiles")
# A root made here gets the build dependencies once, so later builds only add what
# changed (the given .dsc names them).
roots_prime() {
    local root=$1
    echo "build-deb: installing $dsc's build dependencies into the new root" >&2
    # shellcheck disable=SC2046
    cp $(source_files "${versions[0]}") "$root/tmp/"
    roots_chroot_mounts "$root"
    local status=0
    { roots_apt "$root" update && roots_apt "$root" -y "${apt_profiles[@]}" build-dep "/tmp/$dsc" &&
        roots_apt "$root" clean; } >&2 || status=$?
    roots_unmount_all
    rm -f "$root"/tmp/uplinkd_*
    return $status
}
roots_ensure "$root_name" "$release" "$arch" buildd
base=$roots_path
roots_overlay "$base" "$work/overlay"
root=$work/overlay/root
roots_write_sources "$root" "$release"
if [ -n "$profiles" ]; then
    mkdir -p "$root/opt/swift"
    roots_mount --bind /opt/swift "$root/opt/swift"
    mount -o remount,bind,ro "$root/opt/swift"
fi

deps_started=$SECONDS
echo "build-deb: build dependencies from $dsc (apt-get build-dep)" >&2
mkdir -p "$root/build"
for version in "${versions[@]}"; do
    # shellcheck disable=SC2046
    cp $(source_files "$version") "$root/build/"
done
{ roots_apt "$root" update && roots_apt "$root" -y "${apt_profiles[@]}" build-dep "/build/$dsc"; } >&2
deps_seconds=$((SECONDS - deps_started))
echo "build-deb: build dependencies installed in $deps_seconds s" >&2

# An unprivileged builder with no home and no network, as sbuild's.
chroot "$root" useradd --system --user-group --no-create-home --home-dir /nonexistent uplinkd-builder
builder=$(chroot "$root" id -u uplinkd-builder):$(chroot "$root" id -g uplinkd-builder)
chroot "$root" chown -R "$builder" /build
# The first revision from its .dsc; a later one in the same tree, its debian/ replaced
# by that revision's (only debian/changelog differs; debhelper's files go with the
# old debian/), without `debian/rules clean` (-nc): the Swift build is up to date,
# and dpkg-buildpackage packs the same binary with the new version.
build_one() {
    local version=$1 first=$2 log=$out/uplinkd_${1}_$arch.build
    local build_started=$SECONDS status=0
    echo "build-deb: dpkg-buildpackage -b for $version in $base (overlay); log: $log" >&2
    unshare --net -- chroot --userspec="$builder" "$root" env -i \
        PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/nonexistent LANG=C.UTF-8 LC_ALL=C.UTF-8 \
        DEB_BUILD_OPTIONS="parallel=$(nproc)" \
        sh -c 'set -e
               cd /build
               if [ "$3" = yes ]; then
                   dpkg-source -x "uplinkd_$1.dsc" src
                   cd src
                   dpkg-buildpackage -b -uc -us ${2:+-P"$2"}
               else
                   cd src
                   find debian -mindepth 1 -maxdepth 1 ! -name build ! -name swiftpm -exec rm -rf {} +
                   tar -xf "../uplinkd_$1.debian.tar.xz"
                   dpkg-buildpackage -b -uc -us -nc ${2:+-P"$2"}
               fi' \
        _ "$version" "$profiles" "$first" 2>&1 | tee "$log" >&2 || status=$?
    build_seconds=$((SECONDS - build_started))
    if [ "$status" -ne 0 ]; then
        echo "build-deb: dpkg-buildpackage failed in $release $arch after $build_seconds s (log: $log)" >&2
        exit 1
    fi
}

debs=()
first=yes
for version in "${versions[@]}"; do
    build_one "$version" "$first"
    # shellcheck disable=SC2046
    cp $(source_files "$version") "$out/"
    for file in "$root"/build/*.deb "$root"/build/*.buildinfo "$root"/build/*.changes; do
        [ -e "$file" ] && cp "$file" "$out/"
    done
    deb=$out/uplinkd_${version}_$arch.deb
    [ -f "$deb" ] || { echo "build-deb: dpkg-buildpackage made no $deb" >&2; exit 1; }
    echo "build-deb: $(basename "$deb") for $release $arch: dpkg-buildpackage $build_seconds s" >&2
    debs+=("$deb")
    first=no
done
echo "build-deb: ${#debs[@]} package(s) for $release $arch in $((SECONDS - started)) s" \
    "(build dependencies $deps_seconds s)" >&2
printf '%s\n' "${debs[@]}"
