import HIDCodecs

/// The hid-recorder reader; whatever it accepts must survive a write/read round trip.
func fuzzRecording(_ input: UnsafeRawBufferPointer) {
    let text = String(decoding: input, as: UTF8.self)
    guard let recording = try? HIDRecording(text: text) else { return }
    guard let reread = try? HIDRecording(text: recording.text()) else { fatalError("written recording does not parse") }
    if reread.events.map(\.data) != recording.events.map(\.data) { fatalError("round trip changed the reports") }
    if reread.events.map(\.deviceIndex) != recording.events.map(\.deviceIndex) { fatalError("round trip moved reports to another device") }
}
