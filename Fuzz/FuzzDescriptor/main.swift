// libFuzzer target: the report descriptor parser and the generic decoder on what it accepts.
// Built by tools/fuzz.sh with -sanitize=fuzzer -parse-as-library -DFUZZING; a plain build replays files given as arguments.
import HIDCodecs

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let descriptor = try? ReportDescriptor(bytes: bytes) else { return 0 }
    _ = DescriptorJSON.encode(descriptor).serialized()
    for layout in descriptor.input + descriptor.output + descriptor.feature {
        _ = try? GenericReportDecoder.decode(bytes, layout: layout)
    }
    return 0
}

#if !FUZZING
import FuzzReplay
FuzzReplay.run(fuzzOneInput)
#endif
