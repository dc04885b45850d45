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

#if !FUZZING
import FuzzReplay
FuzzReplay.run(fuzzOneInput)
#endif
