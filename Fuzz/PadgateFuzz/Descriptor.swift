import HIDCodecs

/// The report descriptor parser, and the generic decoder on every report layout it accepts.
func fuzzDescriptor(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    guard let descriptor = try? ReportDescriptor(bytes: bytes) else { return }
    _ = DescriptorJSON.encode(descriptor).serialized()
    for layout in descriptor.input + descriptor.output + descriptor.feature {
        _ = try? GenericReportDecoder.decode(bytes, layout: layout)
    }
}
