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

import FuzzReplay

#if FUZZING
// SwiftPM links an executable's main() to `<Target>_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzRecording_main")
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
