#!/usr/bin/env bash
# Prints the footprint figures of uplinkd: the stripped release binary (static Swift
# standard library) and what each part contributes, measured from the unstripped
# binary's symbol sizes, plus the shared libraries it loads.
#
# Usage: bash packaging/footprint.sh        (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

swift build -c release --static-swift-stdlib --disable-local-rpath >/dev/null
binary=.build/release/uplinkd
stripped=$(mktemp)
trap 'rm -f "$stripped" "$baseline_dir"/* 2>/dev/null; rmdir "$baseline_dir" 2>/dev/null || true' EXIT
strip -o "$stripped" "$binary"

# Baseline: an empty Swift program linked the same way (lld, packed relocations,
# libstdc++ static: Package.swift), i.e. the runtime every static Swift binary pays for.
baseline_dir=$(mktemp -d)
echo 'print("x")' > "$baseline_dir/main.swift"
swiftc -O -static-stdlib -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs -L "$PWD/packaging/link" \
    "$baseline_dir/main.swift" -o "$baseline_dir/hello" 2>/dev/null
strip "$baseline_dir/hello"

size_of() { stat -c %s "$1"; }
kib() { awk -v b="$1" 'BEGIN { printf "%.0f KiB", b / 1024 }'; }

# Sum of symbol sizes whose (mangled) names belong to a module.
module_bytes() {
    nm -S -t d --size-sort "$binary" 2>/dev/null | awk -v pattern="$1" '$4 ~ pattern { sum += $2 } END { print sum + 0 }'
}

printf '%-46s %s\n' "stripped release binary" "$(kib "$(size_of "$stripped")")"
printf '%-46s %s\n' "  empty static Swift program (runtime floor)" "$(kib "$(size_of "$baseline_dir/hello")")"
printf '%-46s %s\n' "  UplinkCore symbols" "$(kib "$(module_bytes '^\\$s10UplinkCore')")"
printf '%-46s %s\n' "  UplinkLinux symbols" "$(kib "$(module_bytes '^\\$s11UplinkLinux')")"
printf '%-46s %s\n' "  uplinkd (command line) symbols" "$(kib "$(module_bytes '^\\$s7uplinkd')")"
printf '%-46s %s\n' "  Swift Regex (_StringProcessing, _RegexParser)" "$(kib $(( $(module_bytes '^\\$s17_StringProcessing') + $(module_bytes '^\\$s12_RegexParser') )))"
printf '%-46s %s\n' "  C shims" "$(kib "$(module_bytes '^uplinkd_')")"
echo "shared libraries loaded (NEEDED), file sizes:"
for library in $(readelf -d "$binary" | awk '/NEEDED/ { gsub(/[\[\]]/, "", $5); print $5 }'); do
    path=$(ldconfig -p | awk -v name="$library" '$1 == name { print $NF; exit }')
    [ -n "$path" ] && printf '  %-44s %s\n' "$library" "$(kib "$(stat -L -c %s "$path")")"
done
