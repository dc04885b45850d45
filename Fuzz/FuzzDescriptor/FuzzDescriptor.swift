// libFuzzer target: the report descriptor parser and the generic decoder on what it accepts.
// Built by tools/fuzz.sh with -sanitize=fuzzer -DFUZZING; a plain build replays files given as arguments.
// (Not named main.swift: main.swift forces top-level-code mode, which clashes with libFuzzer's main.)
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

import FuzzReplay

#if FUZZING
// SwiftPM links an executable's main() to `<Target>_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzDescriptor_main")
func fuzzerMain(argc: CInt, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzReplay.runLibFuzzer(argc: argc, argv: argv) { fuzzOneInput($0, $1) }
}
#else
// A plain build replays input files (e.g. crashes found by tools/fuzz.sh).
@main
enum Replay {
    static func main() { FuzzReplay.run(fuzzOneInput) }
}
#endif
