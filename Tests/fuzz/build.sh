#!/usr/bin/env bash
# Builds the libFuzzer binary of uplinkd's parsers (Tests/fuzz/FuzzTargets.swift) with
# Swift's -sanitize=fuzzer,address: the core and its PCRE2 wrapper compiled again with
# coverage and AddressSanitizer, outside SwiftPM (which cannot build a libFuzzer main).
# Prints the binary's path. Usage: bash Tests/fuzz/build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/opt/swift/usr/bin:$PATH"

out=.build/fuzz
mkdir -p "$out"
sanitize=(-sanitize=fuzzer,address)
pcre_cflags=$(pkg-config --cflags libpcre2-8)

# The C shim, instrumented the same way (libFuzzer's main comes in at the link).
clang -g -O1 -fsanitize=fuzzer-no-link,address $pcre_cflags -I Sources/CPCRE2Shim/include \
    -c Sources/CPCRE2Shim/pcre2_shim.c -o "$out/pcre2_shim.o"
cat > "$out/CPCRE2Shim.modulemap" <<MAP
module CPCRE2Shim {
    header "$PWD/Sources/CPCRE2Shim/include/pcre2_shim.h"
    export *
}
MAP

# One module at a time, whole-module, as SwiftPM would: UplinkPattern, UplinkCore.
swiftc "${sanitize[@]}" -O -g -package-name uplinkd -parse-as-library -wmo -module-name UplinkPattern \
    -Xcc -fmodule-map-file="$out/CPCRE2Shim.modulemap" \
    -emit-module -emit-module-path "$out/UplinkPattern.swiftmodule" \
    -c Sources/UplinkPattern/*.swift -o "$out/UplinkPattern.o"
swiftc "${sanitize[@]}" -O -g -package-name uplinkd -parse-as-library -wmo -module-name UplinkCore -I "$out" \
    -Xcc -fmodule-map-file="$out/CPCRE2Shim.modulemap" \
    -emit-module -emit-module-path "$out/UplinkCore.swiftmodule" \
    -c $(find Sources/UplinkCore -name "*.swift" | sort) -o "$out/UplinkCore.o"
swiftc "${sanitize[@]}" -O -g -package-name uplinkd -parse-as-library -module-name UplinkFuzz -I "$out" \
    -Xcc -fmodule-map-file="$out/CPCRE2Shim.modulemap" \
    Tests/fuzz/FuzzTargets.swift "$out/UplinkCore.o" "$out/UplinkPattern.o" "$out/pcre2_shim.o" \
    -lpcre2-8 -o "$out/uplinkd-fuzz" 2> >(grep -v "Cannot export local symbol '__asan" >&2)
echo "$out/uplinkd-fuzz"
