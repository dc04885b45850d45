// Decoding cost of DualSense USB input reports from a real recording: ns/report and heap
// allocations/report, for the typed decoder (the hot path), the generic descriptor decoder's array API, and the
// compiled descriptor plan it runs on, decoding into storage the benchmark keeps.
// Usage: CodecBench RECORDING.hid [iterations]   (build with -c release; tools/bench-codecs.sh runs it)
import CMallocCounter
import Glibc
import HIDCodecs

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func readFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n <= 0 { break }
        bytes.append(contentsOf: buffer[0..<n])
    }
    return String(decoding: bytes, as: UTF8.self)
}

let arguments = CommandLine.arguments
guard arguments.count >= 2, let text = readFile(arguments[1]) else {
    print("usage: CodecBench RECORDING.hid [iterations]")
    exit(2)
}
let iterations = arguments.count >= 3 ? Int(arguments[2]) ?? 200 : 200
let recording = try HIDRecording(text: text)
let reports = recording.events.map(\.data).filter { $0.first == 0x01 && $0.count == 64 }
guard !reports.isEmpty else { print("no 64-byte DualSense USB reports in \(arguments[1])"); exit(2) }

// One contiguous buffer, like a ring of reads from hidraw.
let stride = 64
var packed = [UInt8](repeating: 0, count: reports.count * stride)
for (i, r) in reports.enumerated() { packed.replaceSubrange(i * stride..<(i + 1) * stride, with: r) }

var decoder = ControllerInputDecoder(PlayStationInputCodec.dualSenseEdge)
var state = GamepadState()
var checksum: UInt64 = 0

@MainActor func typedPass(_ raw: UnsafeRawBufferPointer) {
    for i in 0..<reports.count {
        let slice = UnsafeRawBufferPointer(rebasing: raw[i * stride..<(i + 1) * stride])
        do { try decoder.decode(slice, into: &state) } catch { fatalError("\(error)") }
        checksum &+= UInt64(state.leftStick.x) &+ UInt64(state.buttons.rawValue) &+ UInt64(UInt16(bitPattern: state.gyro.x))
    }
}

packed.withUnsafeBytes { raw in
    typedPass(raw)  // warm up: tables, caches
    let allocationsBefore = padgate_allocation_count()
    let start = now()
    for _ in 0..<iterations { typedPass(raw) }
    let elapsed = now() - start
    let allocations = padgate_allocation_count() - allocationsBefore
    let total = Double(iterations * reports.count)
    print("typed_decoder reports=\(Int(total)) ns_per_report=\(String(Double(elapsed) / total)) allocations_per_report=\(String(Double(allocations) / total))")
}

// The generic path's array API (allocates by design: it returns arrays of values).
let descriptor = try ReportDescriptor(bytes: recording.devices[0].descriptor)
let layout = descriptor.input[0]
let genericIterations = max(1, iterations / 20)
do {
    let allocationsBefore = padgate_allocation_count()
    let start = now()
    for _ in 0..<genericIterations {
        for r in reports {
            let fields = try GenericReportDecoder.decode(r, layout: layout)
            checksum &+= UInt64(truncatingIfNeeded: fields[0].values[0])
        }
    }
    let elapsed = now() - start
    let total = Double(genericIterations * reports.count)
    print("generic_decoder reports=\(Int(total)) ns_per_report=\(String(Double(elapsed) / total)) allocations_per_report=\(String(Double(padgate_allocation_count() - allocationsBefore) / total))")
}

// The same decoding through a plan compiled once, into value storage kept across reports (no allocation).
let plan = CompiledReportPlan(layout: layout)
var values = plan.makeValueStorage()
let stickX = plan.valueRange(ofField: 0).lowerBound, lastValue = plan.valueCount - 1

@MainActor func planPass(_ raw: UnsafeRawBufferPointer, _ storage: UnsafeMutableBufferPointer<Int64>) {
    for i in 0..<reports.count {
        let slice = UnsafeRawBufferPointer(rebasing: raw[i * stride..<(i + 1) * stride])
        do { try plan.decode(slice, into: storage) } catch { fatalError("\(error)") }
        checksum &+= UInt64(truncatingIfNeeded: storage[stickX]) &+ UInt64(truncatingIfNeeded: storage[lastValue])
    }
}

packed.withUnsafeBytes { raw in
    values.withUnsafeMutableBufferPointer { storage in
        planPass(raw, storage)  // warm up
        let allocationsBefore = padgate_allocation_count()
        let start = now()
        for _ in 0..<iterations { planPass(raw, storage) }
        let elapsed = now() - start
        let allocations = padgate_allocation_count() - allocationsBefore
        let total = Double(iterations * reports.count)
        print("compiled_plan reports=\(Int(total)) values_per_report=\(plan.valueCount) ns_per_report=\(String(Double(elapsed) / total)) allocations_per_report=\(String(Double(allocations) / total))")
    }
}
print("checksum=\(checksum)")
