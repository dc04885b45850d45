import HIDCodecs
import PadFamilies

/// One decoder per kind the drivers' registry has a codec for, made once as a pad's is: making one builds its button tables (3 × 256
/// entries), which cost ~100× the decode itself under coverage instrumentation when this target
/// made four per input (docs/fuzzing.md).
nonisolated(unsafe) var fuzzDecoders = PadKind.allCases.compactMap { PadDrivers.inputCodec($0, nil) }.map(ControllerInputDecoder.init)

/// Every typed input-report decoder, and the report inspector's JSON of what they accept.
func fuzzInputReports(_ input: UnsafeRawBufferPointer) {
    var state = GamepadState()
    for index in fuzzDecoders.indices {
        if (try? fuzzDecoders[index].decode(input, into: &state)) != nil {
            _ = ReportInspector.semanticFields(state)
        }
    }
}
