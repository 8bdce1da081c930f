#!/usr/bin/env bash
# Type-checks Example.swift, an embedding program, against the built modules as a
# program outside the package sees them (no -package-name: `package` declarations
# are out of reach), then a control that reaches for a package-only name and must be
# refused. Usage: check.sh [BUILD_DIR] (default .build/debug, after `swift build`).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-.build/debug}
args=(-typecheck -I "$build/Modules")
for map in Sources/C*/module.modulemap "$build"/C*.build/module.modulemap; do
    args+=(-Xcc "-fmodule-map-file=$map")
done
for flag in $(pkg-config --cflags-only-I libnl-route-3.0 libcurl libcares libmosquitto libpcre2-8); do
    args+=(-Xcc "$flag")
done
swiftc "${args[@]}" Tests/embedding/Example.swift
echo "embedding: Example.swift compiles against the public API"
control=$(mktemp --suffix=.swift)
trap 'rm -f "$control"' EXIT
printf 'import UplinkCore\nlet core = AgentCore(configuration: Configuration())\n' > "$control"
# With the package's own name the control compiles, so its refusal below is the
# access level's. The name is the one SwiftPM passed in this build (its build plan,
# BUILD_DIR.yaml); without that, SwiftPM's rule: the root folder's name, lowercased,
# made a C identifier ("ci-clone" is ci_clone).
identity=$(grep -o -m1 -- '"-package-name","[^"]*"' "${build%/}.yaml" 2>/dev/null | cut -d'"' -f4 || true)
if [ -z "$identity" ]; then
    identity=$(basename "$PWD" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9_]/_/g; s/^[0-9]/_&/')
fi
swiftc "${args[@]}" -package-name "$identity" "$control"
if refusal=$(swiftc "${args[@]}" "$control" 2>&1); then
    echo "embedding: the control compiled: package declarations are reachable from outside the package" >&2
    exit 1
fi
grep -q "cannot find 'AgentCore' in scope" <<<"$refusal" || { echo "$refusal" >&2; exit 1; }
echo "embedding: a package-only name (AgentCore) is refused outside the package, accepted inside"
