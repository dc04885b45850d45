// libFuzzer target: the hid-recorder reader, and that whatever it accepts survives a write/read round trip.
import HIDCodecs

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let recording = try? HIDRecording(text: text) else { return 0 }
    guard let reread = try? HIDRecording(text: recording.text()) else { fatalError("written recording does not parse") }
    if reread.events.map(\.data) != recording.events.map(\.data) { fatalError("round trip changed the reports") }
    return 0
}

#if !FUZZING
import FuzzReplay
FuzzReplay.run(fuzzOneInput)
#endif
