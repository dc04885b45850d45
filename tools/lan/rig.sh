#!/usr/bin/env bash
# A LAN of two machines for the discovery and IPv6 tests: network namespaces NAME-h (the host) and
# NAME-c (the client) joined by a veth pair, each with its own dbus-daemon and avahi-daemon (the
# real ones, from Debian), as two computers on one home network have. Needs root.
#   tools/lan/rig.sh up NAME DIR [ipv6-only]   # prints nothing; each side's system bus is DIR/h-bus and DIR/c-bus
#   tools/lan/rig.sh avahi NAME DIR h|c        # (re)starts one side's avahi-daemon
#   tools/lan/rig.sh stop-avahi NAME DIR h|c
#   tools/lan/rig.sh publish NAME DIR h|c FILE     # one DNS-SD service per line of FILE, through that side's
#                                                  # avahi-daemon: INSTANCE<TAB>PORT<TAB>TXT<TAB>TXT…
#                                                  # (_padgate._udp; any bytes but tab and newline); waits
#                                                  # until every one is established
#   tools/lan/rig.sh down NAME DIR
set -euo pipefail
# The daemons started here must hold none of the caller's descriptors: a test runner that learns a
# child's end from a descriptor closing (Foundation's Process does) would otherwise wait for ever.
for fd in $(ls /proc/$$/fd); do
    [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null || true
done
cmd=$1 name=$2 dir=$3
shift 3

bus_conf() {
    cat > "$dir/$1-bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/$1-bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
}

avahi_conf() {
    cat > "$dir/$1-avahi.conf" <<CONF
[server]
host-name=padgate-lan-$1
use-ipv4=yes
use-ipv6=yes
allow-interfaces=$name-$1
enable-dbus=yes
[wide-area]
enable-wide-area=no
[publish]
publish-workstation=no
publish-hinfo=no
CONF
}

start_avahi() {
    local side=$1
    avahi_conf "$side"
    # avahi-daemon keeps its pid file in /run/avahi-daemon: a private tmpfs there per daemon.
    ip netns exec "$name-$side" env DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/$side-bus" unshare -m sh -c "
        mkdir -p /run/avahi-daemon && mount -t tmpfs tmpfs /run/avahi-daemon &&
        exec avahi-daemon --no-drop-root --no-chroot --no-rlimits --no-proc-title -f '$dir/$side-avahi.conf'
    " > "$dir/$side-avahi.log" 2>&1 &
    echo $! > "$dir/$side-avahi.pid"
    # Ready once it owns its name on the bus.
    for _ in $(seq 1 200); do
        if DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/$side-bus" dbus-send --system --print-reply --dest=org.freedesktop.DBus \
            /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Avahi 2>/dev/null | grep -q "boolean true"; then
            return 0
        fi
        sleep 0.05
    done
    echo "lan: avahi-daemon ($side) did not come up:" >&2; cat "$dir/$side-avahi.log" >&2; return 1
}

# Strangers' adverts: one avahi-publish each (avahi-utils), detached like the daemons, their pids
# kept for `down`.
publish() {
    local side=$1 file=$2 count=0
    local log="$dir/$side-publish.log"
    : > "$log"
    while IFS=$'\t' read -r -a fields; do
        [ "${#fields[@]}" -ge 2 ] || continue
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/$side-bus" setsid avahi-publish -s "${fields[0]}" _padgate._udp "${fields[1]}" "${fields[@]:2}" \
            >> "$log" 2>&1 < /dev/null &
        echo $! >> "$dir/$side-publish.pids"
        count=$((count + 1))
    done < "$file"
    for _ in $(seq 1 1200); do
        [ "$(grep -c "^Established" "$log")" -ge "$count" ] && return 0
        sleep 0.1
    done
    echo "lan: only $(grep -c "^Established" "$log") of $count services were established:" >&2; tail -20 "$log" >&2; return 1
}

stop_publishing() {
    local pids="$dir/$1-publish.pids"
    [ -f "$pids" ] || return 0
    kill $(cat "$pids") 2>/dev/null || true
    rm -f "$pids"
}

stop_avahi() {
    local pidfile="$dir/$1-avahi.pid"
    [ -f "$pidfile" ] || return 0
    kill "$(cat "$pidfile")" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$(cat "$pidfile")" 2>/dev/null || break; sleep 0.05; done
    rm -f "$pidfile"
}

case $cmd in
up)
    mode=${1:-dual}
    mkdir -p "$dir"
    ip netns add "$name-h"
    ip netns add "$name-c"
    ip link add "$name-h" netns "$name-h" type veth peer name "$name-c" netns "$name-c"
    for side in h c; do
        ns="$name-$side"
        ip -n "$ns" link set lo up
        if [ "$mode" = ipv6-only ]; then
            # No IPv4 at all, not even loopback's: link-local IPv6 plus a unique-local address.
            ip -n "$ns" addr del 127.0.0.1/8 dev lo
        else
            ip -n "$ns" addr add "10.78.0.$([ $side = h ] && echo 1 || echo 2)/24" dev "$ns"
        fi
        ip -n "$ns" addr add "fd00:78::$([ $side = h ] && echo 1 || echo 2)/64" dev "$ns" nodad
        ip -n "$ns" link set "$ns" up
        bus_conf "$side"
        ip netns exec "$ns" dbus-daemon --config-file="$dir/$side-bus.conf" --fork --print-pid > "$dir/$side-bus.pid" 2> "$dir/$side-bus.log" < /dev/null
    done
    # The link-local addresses come up after duplicate-address detection: wait for them.
    for side in h c; do
        for _ in $(seq 1 100); do
            ip -n "$name-$side" -6 addr show dev "$name-$side" scope link | grep -q "inet6" \
                && ! ip -n "$name-$side" -6 addr show dev "$name-$side" | grep -q tentative && break
            sleep 0.05
        done
    done
    ;;
avahi) start_avahi "$1" ;;
publish) publish "$1" "$2" ;;
stop-avahi) stop_avahi "$1" ;;
down)
    for side in h c; do
        stop_publishing "$side"
        stop_avahi "$side"
        [ -f "$dir/$side-bus.pid" ] && kill "$(cat "$dir/$side-bus.pid")" 2>/dev/null || true
        ip netns del "$name-$side" 2>/dev/null || true
    done
    ;;
*) echo "usage: $0 up|avahi|stop-avahi|down NAME DIR" >&2; exit 2 ;;
esac
