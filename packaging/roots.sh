# shellcheck shell=bash
# Debian roots for packaging/build-deb.sh and packaging/test-deb.sh (sourced, not run).
#
# A root is a Debian tree made once with debootstrap and kept under
# ${UPLINKD_ROOTS:-/var/cache/uplinkd-roots}/NAME (a cache: remove it and it is made
# again). A build or a test never changes it: it runs in an overlay whose changes
# (installed packages, the build, the test's installs) are thrown away at the end,
# so every run starts from the same clean root. Downloaded .debs are kept beside the
# root (NAME.debs) so later runs do not fetch them again. A root of another
# architecture (arm64 on an amd64 machine) runs under qemu-user through binfmt_misc
# (.ci/setup registers it).
#
# The caller runs in a mount namespace of its own (roots_enter_namespace): whatever
# happens to the script, its mounts go away with it and none reaches the machine's.

roots_dir=${UPLINKD_ROOTS:-/var/cache/uplinkd-roots}

# roots_export_tree DEST: the source tree to build, from the current directory into
# DEST: git's files with uncommitted changes and new files (not what .gitignore
# leaves out), or outside a git work tree every file but the builds'. packaging/out
# and a top-level debian/ are never part of it.
roots_export_tree() {
    local dest=$1
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files -z --cached --others --exclude-standard |
            while IFS= read -r -d '' file; do
                case "$file" in packaging/out/*|debian/*) continue ;; esac
                if [ -e "$file" ] || [ -L "$file" ]; then printf '%s\0' "$file"; fi
            done | tar --null --no-recursion -T - -cf - | tar -xf - -C "$dest"
    else
        tar --exclude='./.build*' --exclude=./packaging/out --exclude=./.git --exclude=./debian -cf - . |
            tar -xf - -C "$dest"
    fi
}

# roots_enter_namespace SCRIPT ARG...: re-runs SCRIPT with ARGs in a private mount
# namespace (once: a script it starts stays in it).
roots_enter_namespace() {
    if [ -z "${UPLINKD_MOUNT_NS:-}" ]; then
        local script=$1
        shift
        exec env UPLINKD_MOUNT_NS=$$ unshare --mount --propagation private -- bash "$script" "$@"
    fi
}

roots_mirror() {
    local mirror=${UPLINKD_MIRROR:-}
    [ -n "$mirror" ] || mirror=$(sed -n 's/^URIs: //p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
    echo "${mirror:-http://deb.debian.org/debian}"
}

roots_security_mirror() {
    local mirror=${UPLINKD_SECURITY_MIRROR:-}
    [ -n "$mirror" ] || mirror=$(sed -n 's/^URIs: \(.*debian-security.*\)/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
    echo "${mirror:-http://deb.debian.org/debian-security}"
}

# The release's main, updates and security suites.
roots_write_sources() {
    local root=$1 release=$2
    printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s %s-security main\n' \
        "$(roots_mirror)" "$release" "$(roots_mirror)" "$release" "$(roots_security_mirror)" "$release" \
        > "$root/etc/apt/sources.list"
    rm -f "$root/etc/apt/sources.list.d/debian.sources"
}

# Can this machine run ARCH's programs (natively, or qemu-user through binfmt_misc)?
roots_check_arch() {
    local arch=$1 host
    host=$(dpkg --print-architecture)
    [ "$arch" = "$host" ] && return 0
    local format
    case "$arch" in
        arm64) format=qemu-aarch64 ;;
        amd64) format=qemu-x86_64 ;;
        *) echo "roots: no qemu-user format known for $arch" >&2; return 1 ;;
    esac
    if ! grep -qx enabled "/proc/sys/fs/binfmt_misc/$format" 2>/dev/null; then
        echo "roots: $arch programs cannot run here: binfmt_misc has no enabled $format" \
            "(bash .ci/setup installs qemu-user-static and binfmt-support and registers it)" >&2
        return 1
    fi
}

# roots_ensure NAME RELEASE ARCH VARIANT [PACKAGE,...]: sets roots_path to the root, made with
# debootstrap if missing (into NAME.new, renamed when complete, so a failed
# debootstrap leaves nothing that looks like a root). Then runs `roots_prime ROOT`
# when the caller defines it (installing what every run needs, once).
roots_ensure() {
    local name=$1 release=$2 arch=$3 variant=$4 include=${5:-}
    local root=$roots_dir/$name
    mkdir -p "$roots_dir"
    local lock_fd
    exec {lock_fd}>"$root.lock"
    flock "$lock_fd"
    if [ ! -x "$root/usr/bin/apt-get" ]; then
        echo "roots: making $root (debootstrap --variant=$variant $release $arch)" >&2
        local started=$SECONDS
        rm -rf --one-file-system "$root.new"
        if ! debootstrap --variant="$variant" --arch="$arch" ${include:+--include="$include"} \
            "$release" "$root.new" "$(roots_mirror)" > "$root.debootstrap.log" 2>&1; then
            tail -n 30 "$root.debootstrap.log" >&2
            echo "roots: debootstrap failed (log: $root.debootstrap.log)" >&2
            exec {lock_fd}>&-
            return 1
        fi
        roots_write_sources "$root.new" "$release"
        if declare -F roots_prime >/dev/null; then
            roots_prime "$root.new" || { exec {lock_fd}>&-; return 1; }
        fi
        mv "$root.new" "$root"
        echo "roots: made $root in $((SECONDS - started)) s" >&2
    fi
    exec {lock_fd}>&-
    roots_path=$root
}

roots_mounts=()

roots_mount() {
    mount "$@"
    roots_mounts+=("${!#}")
}

# roots_chroot_mounts DIR: /proc, /dev, /dev/pts and a fresh /dev/shm in a root.
roots_chroot_mounts() {
    local dir=$1
    roots_mount -t proc proc "$dir/proc"
    roots_mount --bind /dev "$dir/dev"
    roots_mount --bind /dev/pts "$dir/dev/pts"
    mkdir -p "$dir/dev/shm"
    roots_mount -t tmpfs -o mode=1777,nosuid,nodev shm "$dir/dev/shm"
    cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
}

# roots_overlay ROOT WORK: mounts a throwaway copy of ROOT at WORK/root (changes go
# to WORK/upper) with /proc, /dev and the kept .debs. Not in a subshell: the mounts
# are recorded for roots_unmount_all.
roots_overlay() {
    local base=$1 work=$2
    mkdir -p "$work/upper" "$work/overlay-work" "$work/root" "$base.debs/partial"
    roots_mount -t overlay overlay \
        -o "lowerdir=$base,upperdir=$work/upper,workdir=$work/overlay-work" "$work/root"
    roots_chroot_mounts "$work/root"
    roots_mount --bind "$base.debs" "$work/root/var/cache/apt/archives"
    # Thrown away at the end: dpkg need not sync every file, and man-db need not index
    # the manual pages of what is installed (minutes under qemu-user).
    echo force-unsafe-io > "$work/root/etc/dpkg/dpkg.cfg.d/uplinkd-throwaway"
    rm -f "$work/root/var/lib/man-db/auto-update"
    echo 'man-db man-db/auto-update boolean false' | chroot "$work/root" debconf-set-selections
}

# Unmounts what roots_mount mounted, the last first.
roots_unmount_all() {
    local i
    for ((i = ${#roots_mounts[@]} - 1; i >= 0; i--)); do
        umount "${roots_mounts[i]}" 2>/dev/null || umount -l "${roots_mounts[i]}" ||
            echo "roots: could not unmount ${roots_mounts[i]}" >&2
    done
    roots_mounts=()
}

# Removes a work directory once nothing is mounted below it (never through a mount).
roots_remove_work() {
    local work=$1
    if findmnt -rn -o TARGET | grep -q "^$work/"; then
        echo "roots: $work still has mounts; left in place" >&2
        return 1
    fi
    rm -rf --one-file-system "$work"
}

roots_apt() {
    local root=$1
    shift
    chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 \
        apt-get -o APT::Install-Recommends=false -o Dpkg::Use-Pty=0 -q "$@"
}
