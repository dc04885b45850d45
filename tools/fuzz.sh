#!/usr/bin/env bash
# Builds the libFuzzer driver (Fuzz/PadgateFuzz) and runs each of its targets for a while, or for a
# number of executions:
#   tools/fuzz.sh [SECONDS_PER_TARGET=30] [TARGET...]
#   tools/fuzz.sh --runs N [TARGET...]          (docs/fuzzing.md: the long run is --runs 10000000)
# targets: descriptor input-reports recording trigger (codecs), wire-host session-budget wire-client datagram-open
# control-frame pairing virtual-pad pad-families haptics (every parser that touches network bytes)
# Uses its own scratch path (.build-fuzz) so sanitizer builds never mix with normal ones.
# Crashes are written to .build-fuzz/artifacts/<target>/; replay one with a plain build:
#   swift build --product padgate-fuzz && .build/debug/padgate-fuzz descriptor .build-fuzz/artifacts/descriptor/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-max_total_time="${1:-30}")
what="${1:-30}s"
if [ "${1:-}" = "--runs" ]; then limit=(-runs="$2"); what="$2 executions"; shift 2; else shift || true; fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(descriptor input-reports recording trigger wire-host session-budget wire-client datagram-open control-frame pairing virtual-pad pad-families haptics)
scratch=.build-fuzz
fixtures=Tests/HIDCodecsTests/Fixtures

seed_corpus() {   # real inputs make far better starting points than empty files
    local target=$1 dir=$2
    mkdir -p "$dir"
    case "$target" in
        descriptor) cp -n "$fixtures"/descriptors/*.rdesc.bin "$dir"/ 2>/dev/null || true ;;
        recording) for f in "$fixtures"/recordings/*.hid; do head -c 4000 "$f" > "$dir/$(basename "$f")"; done ;;
        input-reports) python3 - "$dir" <<'PY'
import json, sys, os
d = json.load(open("Tests/HIDCodecsTests/Fixtures/input_vectors/hidtools_kernel_selftest_vectors.json"))
for name, dev in d["devices"].items():
    c = dev["cases"][0]
    open(os.path.join(sys.argv[1], name), "wb").write(bytes.fromhex(c["initial_report"]))
PY
        ;;
        trigger) printf 'left weapon 2 5 8' > "$dir/weapon"; printf '\x21\xf8\x03\x00\x48\x92\x24\x00\x00\x00\x00' > "$dir/feedback" ;;
        pad-families) python3 - "$dir" <<'PY'
import json, sys, os
blobs = json.load(open("Tests/HIDCodecsTests/Fixtures/calibration/ds4_feature_calibration.json"))["blobs"]
for blob in blobs: open(os.path.join(sys.argv[1], blob["id"]), "wb").write(bytes.fromhex(blob["hex"]))
open(os.path.join(sys.argv[1], "xbox_sdl_rumble"), "wb").write(bytes([0x03, 0x0F, 20, 80, 100, 50, 0xFF, 0x00, 0xEB]))
# A Switch Pro's two flash blocks (IMU offsets 0, scales 16384 and 13371; sticks 2000 +-1500), no user data.
imu = b"".join(v.to_bytes(2, "little") for v in [0, 0, 0, 16384, 16384, 16384, 0, 0, 0, 13371, 13371, 13371])
def pack(a, b): return bytes([a & 0xFF, (a >> 8) | ((b & 0xF) << 4), b >> 4])
left = pack(1500, 1500) + pack(2000, 2000) + pack(1500, 1500)
right = pack(2000, 2000) + pack(1500, 1500) + pack(1500, 1500)
factory = imu + b"\xff" * 5 + left + right + b"\xff"
open(os.path.join(sys.argv[1], "switch_flash"), "wb").write(factory + b"\xff" * 48)
open(os.path.join(sys.argv[1], "switch_rumble"), "wb").write(bytes([0x10, 0, 0, 1, 0x60, 0x72, 0, 0xC8, 0x60, 0x40]))
PY
        ;;
        *) "$scratch/release/padgate-fuzz" --write-seeds "$scratch/seeds" "$fixtures"
           # A target --write-seeds has no seeds for starts from an empty corpus rather than end the run.
           if compgen -G "$scratch/seeds/$target/*" >/dev/null; then cp -n "$scratch/seeds/$target"/* "$dir"/
           else echo "$target: no seeds written for it; starting from an empty corpus"; fi ;;
    esac
}

echo "== building padgate-fuzz"
swift build -c release --scratch-path "$scratch" --product padgate-fuzz \
    -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library -Xswiftc -DFUZZING -Xswiftc -enable-testing >/dev/null
for target in "${targets[@]}"; do
    corpus="$scratch/corpus/$target"
    artifacts="$scratch/artifacts/$target"
    mkdir -p "$artifacts"
    seed_corpus "$target" "$corpus"
    log="$scratch/$target.log"
    echo "== running $target for $what"
    status=0
    export SWIFT_BACKTRACE=enable=no   # let libFuzzer catch the trap and write the crash artifact
    # -timeout: an input that runs 10 s is a hang and is saved as a crash; -rss_limit_mb: so is one that needs 2 GB.
    started=$(date +%s)
    "$scratch/release/padgate-fuzz" "$target" "${limit[@]}" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1 || status=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    [ -n "$execs" ] || execs=$(grep -Eo '#[0-9]+' "$log" | tail -1 | tr -d '#')
    echo "$target: executions=${execs:-?} seconds=$(( $(date +%s) - started )) exit=$status"
    if [ "$status" -ne 0 ]; then tail -30 "$log"; exit "$status"; fi
done
