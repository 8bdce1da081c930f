#!/bin/sh
# shell-failover.sh: the do-it-yourself uplink failover that gateway integrators
# write today, kept as the baseline uplinkd is measured against
# (Tests/bench/bench_compare.py). POSIX sh (dash, busybox ash); needs curl and
# iproute2. Not shipped: it is here to be measured.
#
# Every INTERVAL seconds it fetches URL through each uplink in turn, in priority
# order, with
#     curl --interface IF -s -o /dev/null -w '%{http_code}' --max-time T URL
# An uplink is "online" when the status is the expected one. The first answer after
# start decides at once; then an online uplink goes "offline" after FALL consecutive
# failed probes and comes back after RISE consecutive good ones (uplinkd's defaults:
# 2 and 2). The primary is the first online uplink in the order given; when it
# changes the loop runs
#     ip route replace default via GW dev IF metric METRIC proto PROTO
# (`ip route del default metric METRIC proto PROTO` when no uplink is online), so
# like uplinkd's 50-route-failover hook it only owns that one route.
#
# Usage:
#   shell-failover.sh [-u URL] [-e STATUS] [-i SECONDS] [-t SECONDS] [-f FALL]
#                     [-r RISE] [-m METRIC] [-p PROTO] [-x HOOK] [-o FILE] [-v]
#                     IFACE:GATEWAY...
#
#   IFACE:GATEWAY  the uplinks, best first (GATEWAY may be IPv6: split at the first ':')
#   -u URL       probe URL (required; env FAILOVER_URL)
#   -e STATUS    expected HTTP status (default 204; env FAILOVER_EXPECT)
#   -i SECONDS   pause between rounds (default 300; env FAILOVER_INTERVAL); fractions
#                need a sleep(1) that takes them (GNU coreutils, busybox)
#   -t SECONDS   curl --max-time of each probe (default 5; env FAILOVER_MAX_TIME)
#   -f FALL      failed probes before an online uplink goes offline (default 2)
#   -r RISE      good probes before an offline uplink is online again (default 2)
#   -m METRIC, -p PROTO   of the route it owns (default 10 and 77)
#   -x HOOK      program run on every change, one at a time, with UPLINK_EVENT
#                (verdict or primary), UPLINK_INTERFACE, UPLINK_PREVIOUS,
#                UPLINK_VERDICT (online/offline), UPLINK_PRIMARY,
#                UPLINK_PREVIOUS_PRIMARY in its environment (like uplinkd's hooks)
#   -o FILE      append one line per change to FILE (a file, or a FIFO with a reader):
#                "EVENT IFACE PREVIOUS VERDICT PRIMARY"
#   -v           log every probe and the end of every round on stderr
# Without IFACE:GATEWAY operands the list comes from FAILOVER_UPLINKS
# (space-separated). Changes are always logged on stderr.
set -u

URL=${FAILOVER_URL:-}
EXPECT=${FAILOVER_EXPECT:-204}
INTERVAL=${FAILOVER_INTERVAL:-300}
MAX_TIME=${FAILOVER_MAX_TIME:-5}
FALL=${FAILOVER_FALL:-2}
RISE=${FAILOVER_RISE:-2}
METRIC=10
PROTO=77
HOOK=
LINE_FILE=
VERBOSE=no

log() {
    printf 'shell-failover: %s\n' "$*" >&2
}

die() {
    log "$*"
    exit 64
}

usage() {
    die "usage: shell-failover.sh -u URL [-e STATUS] [-i SECONDS] [-t SECONDS] [-f FALL] [-r RISE] [-m METRIC] [-p PROTO] [-x HOOK] [-o FILE] [-v] IFACE:GATEWAY..."
}

is_count() {        # a whole number
    case "$1" in "" | *[!0-9]*) return 1 ;; *) return 0 ;; esac
}

is_positive() {     # a whole number, at least 1
    is_count "$1" && [ "$1" -ge 1 ]
}

is_seconds() {      # 5, 0.8
    case "$1" in "" | .* | *. | *[!0-9.]* | *.*.*) return 1 ;; *) return 0 ;; esac
}

while getopts u:e:i:t:f:r:m:p:x:o:v option; do
    case "$option" in
        u) URL=$OPTARG ;;
        e) EXPECT=$OPTARG ;;
        i) INTERVAL=$OPTARG ;;
        t) MAX_TIME=$OPTARG ;;
        f) FALL=$OPTARG ;;
        r) RISE=$OPTARG ;;
        m) METRIC=$OPTARG ;;
        p) PROTO=$OPTARG ;;
        x) HOOK=$OPTARG ;;
        o) LINE_FILE=$OPTARG ;;
        v) VERBOSE=yes ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))

if [ "$#" -eq 0 ] && [ -n "${FAILOVER_UPLINKS:-}" ]; then
    set -f                                  # split on spaces, never glob
    # shellcheck disable=SC2086             # the split is the point
    set -- $FAILOVER_UPLINKS
    set +f
fi
[ "$#" -gt 0 ] || usage
case "$URL" in http://* | https://*) ;; *) die "-u URL: an http:// or https:// URL is required" ;; esac
is_count "$EXPECT" || die "-e: expected a status such as 204 or 200, got '$EXPECT'"
is_seconds "$INTERVAL" || die "-i: expected seconds, got '$INTERVAL'"
is_seconds "$MAX_TIME" || die "-t: expected seconds, got '$MAX_TIME'"
is_positive "$FALL" || die "-f: expected a count of at least 1, got '$FALL'"
is_positive "$RISE" || die "-r: expected a count of at least 1, got '$RISE'"
is_count "$METRIC" || die "-m: expected a number, got '$METRIC'"
is_count "$PROTO" || die "-p: expected a number, got '$PROTO'"
if [ -n "$HOOK" ] && [ ! -x "$HOOK" ]; then
    die "-x: $HOOK is not executable"
fi

# State, one positional parameter per uplink, in priority order:
#     IFACE,GATEWAY,STATE,FAILS,OKS      STATE: unknown, online, offline
# (POSIX sh has no arrays; the positional parameters are the one list it has.)
count=$#
for pair do
    iface=${pair%%:*}
    gateway=${pair#*:}
    case "$iface" in "" | *[!A-Za-z0-9._@-]*) die "bad interface name in '$pair'" ;; esac
    case "$gateway" in "$pair" | "" | *[!0-9A-Fa-f.:]*) die "expected IFACE:GATEWAY, got '$pair'" ;; esac
    set -- "$@" "$iface,$gateway,unknown,0,0"
done
shift "$count"

# An event for the hook program and the line file: EVENT IFACE PREVIOUS VERDICT
# PRIMARY PREVIOUS_PRIMARY.
event() {
    if [ -n "$LINE_FILE" ]; then
        printf '%s %s %s %s %s\n' "$1" "$2" "$3" "$4" "$5" >> "$LINE_FILE"
    fi
    if [ -n "$HOOK" ]; then
        UPLINK_EVENT=$1 UPLINK_INTERFACE=$2 UPLINK_PREVIOUS=$3 UPLINK_VERDICT=$4 \
            UPLINK_PRIMARY=$5 UPLINK_PREVIOUS_PRIMARY=$6 "$HOOK" ||
            log "hook $HOOK failed (exit $?)"
    fi
}

# Makes IFACE (via GATEWAY) the preferred default route, or removes ours if IFACE
# is empty.
route() {
    family=-4
    case "$2" in *:*) family=-6 ;; esac
    if [ -n "$1" ]; then
        ip "$family" route replace default via "$2" dev "$1" metric "$METRIC" proto "$PROTO" ||
            log "ip route replace default via $2 dev $1 failed"
    else
        ip -4 route del default metric "$METRIC" proto "$PROTO" 2>/dev/null
        ip -6 route del default metric "$METRIC" proto "$PROTO" 2>/dev/null
    fi
}

primary=
primary_gateway=
while :; do
    count=$#
    chosen=
    chosen_gateway=
    for record do
        iface=${record%%,*}
        rest=${record#*,}
        gateway=${rest%%,*}
        rest=${rest#*,}
        state=${rest%%,*}
        rest=${rest#*,}
        fails=${rest%%,*}
        oks=${rest#*,}

        code=$(curl --interface "$iface" -s -o /dev/null -w '%{http_code}' --max-time "$MAX_TIME" "$URL") ||
            code=${code:-000}
        [ "$VERBOSE" = yes ] && log "probe $iface $code"
        if [ "$code" = "$EXPECT" ]; then
            fails=0
            oks=$((oks + 1))
        else
            oks=0
            fails=$((fails + 1))
        fi
        new=$state
        case "$state" in
            unknown) if [ "$oks" -gt 0 ]; then new=online; else new=offline; fi ;;
            online) [ "$fails" -ge "$FALL" ] && new=offline ;;
            offline) [ "$oks" -ge "$RISE" ] && new=online ;;
        esac
        if [ "$new" != "$state" ]; then
            log "$iface: $state -> $new (HTTP $code)"
            event verdict "$iface" "$state" "$new" "$primary" "$primary"
        fi
        set -- "$@" "$iface,$gateway,$new,$fails,$oks"
        if [ -z "$chosen" ] && [ "$new" = online ]; then
            chosen=$iface
            chosen_gateway=$gateway
        fi
    done
    shift "$count"

    if [ "$chosen" != "$primary" ]; then
        log "primary ${primary:-none} -> ${chosen:-none}"
        if [ -n "$chosen" ]; then
            route "$chosen" "$chosen_gateway"
            event primary "$chosen" online online "$chosen" "$primary"
        else
            route "" "$primary_gateway"
            event primary "$primary" offline offline "" "$primary"
        fi
        primary=$chosen
        primary_gateway=$chosen_gateway
    fi
    [ "$VERBOSE" = yes ] && log "round done"
    sleep "$INTERVAL"
done
