#!/usr/bin/env bash
# The state file's size and cost per change in both formats (not a test: prints
# figures). Builds Tests/bench/statefile/main.swift with the core's sources, outside
# SwiftPM (-O, whole module; --smoke: -Onone and 50 changes), then writes the file of
# a gateway with three uplinks, a modem and a data plan CHANGES times into DIR
# (default: a new directory under /run, the tmpfs the agent writes to) and prints the
# median per change.
#   bash Tests/bench/bench_state_file.sh [--changes N] [--dir DIR] [--smoke]
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/opt/swift/usr/bin:$PATH"
changes=2000
dir=""
optimize=-O
while [ $# -gt 0 ]; do
    case "$1" in
        --changes) changes=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        # It runs, and both formats read back; unoptimized, its figures say nothing.
        --smoke) changes=50; optimize=-Onone; shift ;;
        *) echo "usage: bash Tests/bench/bench_state_file.sh [--changes N] [--dir DIR] [--smoke]" >&2; exit 64 ;;
    esac
done
out=.build/statefile-bench$optimize
mkdir -p "$out"
pcre_cflags=$(pkg-config --cflags libpcre2-8)
# The core is built again only when a source is newer than the last build.
if [ ! -f "$out/UplinkCore.o" ] || [ -n "$(find Sources/UplinkCore Sources/UplinkPattern Sources/CPCRE2Shim -newer "$out/UplinkCore.o" -print -quit)" ]; then
clang -O2 $pcre_cflags -I Sources/CPCRE2Shim/include -c Sources/CPCRE2Shim/pcre2_shim.c -o "$out/pcre2_shim.o"
cat > "$out/CPCRE2Shim.modulemap" <<MAP
module CPCRE2Shim {
    header "$PWD/Sources/CPCRE2Shim/include/pcre2_shim.h"
    export *
}
MAP
swiftc $optimize -package-name uplinkd -parse-as-library -wmo -module-name UplinkPattern \
    -Xcc -fmodule-map-file="$out/CPCRE2Shim.modulemap" \
    -emit-module -emit-module-path "$out/UplinkPattern.swiftmodule" \
    -c Sources/UplinkPattern/*.swift -o "$out/UplinkPattern.o"
swiftc $optimize -package-name uplinkd -parse-as-library -wmo -module-name UplinkCore -I "$out" \
    -Xcc -fmodule-map-file="$out/CPCRE2Shim.modulemap" \
    -emit-module -emit-module-path "$out/UplinkCore.swiftmodule" \
    -c $(find Sources/UplinkCore -name "*.swift" | sort) -o "$out/UplinkCore.o"
fi
swiftc $optimize -package-name uplinkd -module-name StateFileBench -I "$out" \
    -Xcc -fmodule-map-file="$out/CPCRE2Shim.modulemap" \
    Tests/bench/statefile/main.swift "$out/UplinkCore.o" "$out/UplinkPattern.o" "$out/pcre2_shim.o" \
    -lpcre2-8 -o "$out/statefile-bench"
if [ -z "$dir" ]; then
    dir=$(mktemp -d /run/uplinkd-statefile-bench.XXXXXX)
    trap 'rm -rf "$dir"' EXIT
fi
echo "bench_state_file: $changes changes in $dir ($(stat -f -c %T "$dir"))"
"$out/statefile-bench" "$dir" "$changes"
