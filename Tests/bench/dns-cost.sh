#!/usr/bin/env bash
# What per-uplink DNS costs a check: the same lab probe by IP literal and by a name
# resolved through the uplink's own server (dnsmasq in a namespace); prints the
# median wall time of `uplinkd check` over 20 runs and the bytes of one round.
# Usage (root): bash Tests/bench/dns-cost.sh   (needs .build/release/uplinkd, or
# UPLINKD=/path/to/uplinkd, and dnsmasq); exits 1 if a check could not be run.
set -u
cd "$(dirname "$0")/../.."
bin=${UPLINKD:-.build/release/uplinkd}
status=0
G=dc-gw-$$; U=dc-up-$$
tmp=$(mktemp -d); conf=$tmp/uplinkd.conf
trap 'rm -rf "$tmp"' EXIT
for n in $G $U; do ip netns del $n 2>/dev/null; ip netns add $n; ip -n $n link set lo up; done
ip link add eth0 netns $G type veth peer name up0 netns $U
ip -n $G addr add 10.96.1.2/24 dev eth0; ip -n $G link set eth0 up
ip -n $U addr add 10.96.1.1/24 dev up0; ip -n $U link set up0 up; ip -n $U addr add 203.0.113.80/32 dev lo
ip -n $G route add default via 10.96.1.1
ip netns exec $U dnsmasq --no-resolv --no-hosts --conf-file=/dev/null --keep-in-foreground --pid-file="$tmp/dnsmasq.pid" --listen-address=10.96.1.1 --bind-interfaces --host-record=probe.uplinkd.test,203.0.113.80 &
ip netns exec $U python3 Tests/integration/labserver.py --mode internet --bind 203.0.113.80 --port 80 >/dev/null 2>&1 & echo $! > "$tmp/labserver.pid"
# Ready when both listen (port 80 for HTTP, 53 for DNS).
for _ in $(seq 100); do
    listening=$(ip netns exec "$U" ss -lntu)
    case "$listening" in *203.0.113.80:80*10.96.1.1:53*|*10.96.1.1:53*203.0.113.80:80*) break ;; esac
    sleep 0.1
done
for url in http://203.0.113.80/generate_204 http://probe.uplinkd.test/generate_204; do
cat > "$conf" <<EOC
[check]
default-probes = no
[probe lab]
url = $url
[dns]
sources = configured
[interface eth0]
dns = 10.96.1.1
EOC
python3 - "$url" "$G" "$conf" "$bin" <<'PY' || status=1
import subprocess, time, json, sys
sys.path.insert(0, "Tests/bench"); from benchstats import median, ms
t=[]; b=None
for i in range(21):
    s=time.monotonic(); out=subprocess.run(["ip","netns","exec",sys.argv[2],sys.argv[4],"check","eth0","--json","--config",sys.argv[3]],capture_output=True,text=True).stdout; t.append(time.monotonic()-s)
    r=json.loads(out); b=r["probes"][0]["bytes"]; v=r["verdict"]
print(f"{sys.argv[1]}: {v}, median wall {ms(median(t[1:])):.1f} ms over 20 runs, bytes per round {b}")
PY
done
kill $(cat "$tmp/dnsmasq.pid") $(cat "$tmp/labserver.pid"); for n in $G $U; do ip netns del $n; done
exit $status
