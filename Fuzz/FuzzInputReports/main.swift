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

#if !FUZZING
import FuzzReplay
FuzzReplay.run(fuzzOneInput)
#endif
