// libFuzzer target: the total trigger-block parser (typed effects must re-encode to the same bytes)
// and the dualsensectl grammar parser.
import HIDCodecs

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if bytes.count >= 11, let effect = try? TriggerEffect(block: Array(bytes[0..<11])) {
        guard (try? effect.encoded()) == Array(bytes[0..<11]) else { fatalError("parsed effect does not re-encode to its block") }
    }
    let words = String(decoding: bytes, as: UTF8.self).split(separator: " ").map(String.init)
    if let command = try? TriggerCommand(arguments: words) { _ = try? command.effect.encoded() }
    return 0
}

import FuzzReplay

#if FUZZING
// SwiftPM links an executable's main() to `<Target>_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzTrigger_main")
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
