#!/bin/sh
# Reads uplinkd's state file (format 2) from POSIX sh, as uplinkd-state(5)
# describes it: one fact by name, percent-decoded, after waiting for the hooks of
# the latest decision. For a single value, `uplinkd status --get [IFACE] FACT`
# needs no parsing at all.
state=${UPLINKD_STATE:-/run/uplinkd/state}
# One fact: fact NAME [IFACE], percent-decoded, empty for none.
fact() {
    LC_ALL=C awk -v name="$1" -v iface="${2-}" '
        function hex(c) { return index("0123456789ABCDEF", toupper(c)) - 1 }
        iface == "" && NF == 2 && $1 == name { v = $2 }
        iface != "" && $1 == "uplink" && $2 == iface && $3 == name { v = $4 }
        END {
            if (v == "-") exit
            for (i = 1; i <= length(v); i++) {
                c = substr(v, i, 1)
                if (c == "%" && i + 2 <= length(v) && hex(substr(v, i + 1, 1)) >= 0 && hex(substr(v, i + 2, 1)) >= 0) {
                    c = sprintf("%c", hex(substr(v, i + 1, 1)) * 16 + hex(substr(v, i + 2, 1)))
                    i += 2
                }
                printf "%s", c
            }
        }' "$state"
}
# Wait until the hooks caught up with the file (the routes match it).
while [ "$(fact hooks_done)" != "$(fact decision)" ]; do sleep 1; done
echo "primary uplink: $(fact primary)"
# Interface names hold no white space: words are whole names.
# shellcheck disable=SC2013
for iface in $(awk '$1 == "uplink" && $3 == "kind" { print $2 }' "$state"); do
    echo "$iface is $(fact verdict "$iface") ($(fact reason "$iface"))"
done
if [ -n "$(fact modem_operator wwan0)" ]; then
    echo "wwan0 operator: $(fact modem_operator wwan0)"
    echo "wwan0 plan: $(fact plan_used_bytes wwan0) bytes used, standby $(fact standby wwan0)"
fi
