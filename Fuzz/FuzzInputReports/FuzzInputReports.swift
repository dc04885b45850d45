// libFuzzer target: every typed input-report decoder, and the report inspector's JSON.
import HIDCodecs

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    var state = GamepadState()
    for model in PadModel.allCases {
        var decoder = ControllerInputDecoder(model: model)
        if (try? decoder.decode(raw, into: &state)) != nil {
            _ = ReportInspector.semanticFields(state)
        }
    }
    return 0
}

import FuzzReplay

#if FUZZING
// SwiftPM links an executable's main() to `<Target>_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzInputReports_main")
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
