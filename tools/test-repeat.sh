#!/usr/bin/env bash
# The flake hunter: chosen device test classes N times in one boot per kernel, optionally with both
# of the machine's cores busy, and a table per test (runs, failures, slowest pass). docs/testing.md.
#   tools/test-repeat.sh [-n N] [--loaded] [--kernels "6.12 6.1 newest"] CLASS[,CLASS…] | all
#   make test-repeat CLASSES=ForwardingTests,SDLClientTests N=10 LOADED=1 KERNELS="6.12 6.1 newest"
# Exits non-zero when any run of any test failed; the tables are also written to
# .build/test-repeat.txt (PADGATE_REPEAT_TABLE chooses another file).
set -euo pipefail
cd "$(dirname "$0")/.."
count=5 loaded=0 kernels="6.12" classes=""
while [ $# -gt 0 ]; do
    case $1 in
        -n) count=$2; shift 2 ;;
        --loaded) loaded=1; shift ;;
        --kernels) kernels=$2; shift 2 ;;
        -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "test-repeat: unknown option $1" >&2; exit 2 ;;
        *) classes=$1; shift ;;
    esac
done
[ -n "$classes" ] || { echo "test-repeat: name the classes (CLASS[,CLASS…] or all)" >&2; exit 2; }
[[ "$count" =~ ^[1-9][0-9]*$ ]] || { echo "test-repeat: -n takes a count, not '$count'" >&2; exit 2; }

swift=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
"$swift" build --build-tests
export PADGATE_REPEAT_TABLE=${PADGATE_REPEAT_TABLE:-$PWD/.build/test-repeat.txt}
: > "$PADGATE_REPEAT_TABLE"
[ "$classes" = all ] || export PADGATE_DEVICE_CLASSES=$classes
export PADGATE_DEVICE_REPEAT=$count
# ":all": the named classes run on the newest line too, not only its usual subset.
export PADGATE_GUEST_KERNELS
PADGATE_GUEST_KERNELS=$(for k in $kernels; do printf '%s:all ' "${k%%:*}"; done)

load=()
stop_load() { [ ${#load[@]} -eq 0 ] || kill "${load[@]}" 2>/dev/null || true; }
trap stop_load EXIT
if [ "$loaded" = 1 ]; then
    # Both cores busy, as on a loaded CI machine: one `yes` per core, for the whole run.
    for _ in $(seq "$(nproc)"); do yes > /dev/null & load+=($!); done
    echo "test-repeat: $(nproc) cores busy (pids ${load[*]})"
fi
rc=0
tools/test-devices.sh || rc=$?
echo "test-repeat: $count runs per class on ${kernels}$([ "$loaded" = 1 ] && echo ', loaded'); tables in $PADGATE_REPEAT_TABLE"
cat "$PADGATE_REPEAT_TABLE"
exit "$rc"
