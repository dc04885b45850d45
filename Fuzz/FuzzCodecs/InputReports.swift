import HIDCodecs

/// Every typed input-report decoder, and the report inspector's JSON of what they accept.
func fuzzInputReports(_ input: UnsafeRawBufferPointer) {
    var state = GamepadState()
    for model in PadModel.allCases {
        var decoder = ControllerInputDecoder(model: model)
        if (try? decoder.decode(input, into: &state)) != nil {
            _ = ReportInspector.semanticFields(state)
        }
    }
}
