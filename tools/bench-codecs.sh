#!/usr/bin/env bash
# Decoder benchmark: ns/report and heap allocations/report for DualSense USB input reports from the
# Edge recording, typed decoder vs generic descriptor decoder, and how many times faster each is than
# hid-tools' Python decoder doing the generic decoder's work (every field's values).
#   tools/bench-codecs.sh [ITERATIONS=200]
# hid-tools comes from tools/install-deps.sh (a private venv in .tools/python).
set -euo pipefail
cd "$(dirname "$0")/.."
iterations="${1:-200}"
recording=Tests/HIDCodecsTests/Fixtures/recordings/dualsense_edge_usb_dsegde.hid

swift build -c release --product CodecBench >/dev/null
out=$(.build/release/CodecBench "$recording" "$iterations")
echo "$out"
metric() {   # metric DECODER KEY: the value of KEY= on the DECODER line
    echo "$out" | awk -v decoder="$1" -v key="$2=" '$1 == decoder { for (i = 2; i <= NF; i++) if (index($i, key) == 1) print substr($i, length(key) + 1) }'
}
ours=$(metric typed_decoder ns_per_report)
allocs=$(metric typed_decoder allocations_per_report)
generic=$(metric generic_decoder ns_per_report)

python=.tools/python/bin/python
[ -x "$python" ] || tools/install-deps.sh
if "$python" -c 'import hidtools' 2>/dev/null; then
    theirs=$("$python" - "$recording" <<'PY'
import sys, time
from hidtools.hid import ReportDescriptor
rdesc = None; reports = []
for line in open(sys.argv[1]):
    if line.startswith('R: '):
        p = line.split()[1:]; rdesc = bytes(int(x, 16) for x in p[1:1 + int(p[0])])
    elif line.startswith('E: '):
        p = line.split(); reports.append([int(x, 16) for x in p[3:3 + int(p[2])]])
rd = ReportDescriptor.from_bytes(rdesc)
def generic():   # the same work as our generic decoder: every field's values
    for r in reports:
        report = rd.get(r[0], len(r))
        for f in report.fields: f.get_values(r)
start = time.perf_counter(); generic(); elapsed = time.perf_counter() - start
print(elapsed / len(reports) * 1e9)
PY
)
    echo "hidtools_generic ns_per_report=$theirs"
    python3 -c "print('ratio hid-tools/typed = %.0fx' % ($theirs / $ours))"
    python3 -c "print('ratio hid-tools/generic = %.1fx' % ($theirs / $generic))"
else
    echo "hid-tools did not install (tools/install-deps.sh): no ratio" >&2; exit 1
fi
python3 -c "import sys; ns=float('$ours'); a=float('$allocs'); print('target <=100 ns and 0 allocations:', 'met' if ns <= 100 and a == 0 else 'NOT met'); sys.exit(0 if ns <= 100 and a == 0 else 1)"
