// One executable for every HIDCodecs fuzz target: `padgate-fuzz TARGET [libFuzzer options] [CORPUS...]`
// under tools/fuzz.sh's -sanitize=fuzzer -DFUZZING build, `padgate-fuzz TARGET FILE...` (replay, e.g. a
// crash artifact) in a plain build. Not called main.swift: that file is always top-level code, which
// cannot coexist with libFuzzer's own main.
import Foundation
import Glibc
import PadFamilies
import PadSystem

/// Adding a target is one row here and one function.
let fuzzTargets: KeyValuePairs<String, @Sendable (UnsafeRawBufferPointer) -> Void> = [
    "descriptor": fuzzDescriptor,
    "input-reports": fuzzInputReports,
    "recording": fuzzRecording,
    "trigger": fuzzTrigger,
    "wire-host": fuzzWireHost,
    "session-budget": fuzzSessionBudget,
    "wire-client": fuzzWireClient,
    "datagram-open": fuzzDatagramOpen,
    "control-frame": fuzzControlFrame,
    "pairing": fuzzPairing,
    "virtual-pad": fuzzVirtualPad,
    "pad-families": fuzzPadFamilies,
    "haptics": fuzzHaptics,
]

/// libFuzzer calls one fixed C symbol; it runs whichever target the command line chose.
nonisolated(unsafe) var selectedTarget: (UnsafeRawBufferPointer) -> Void = { _ in }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selectedTarget(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// `--write-seeds DIR FIXTURES`: writes the network targets' seed corpora (Seeds.swift) and exits.
func writeSeedsIfAsked(_ arguments: [String]) {
    guard arguments.count >= 3, arguments[0] == "--write-seeds" else { return }
    do { try writeSeeds(into: URL(fileURLWithPath: arguments[1]), fixtures: URL(fileURLWithPath: arguments[2])) } catch {
        TerminalOutput.write("padgate-fuzz: cannot write seeds: \(error)\n")
        exit(1)
    }
    exit(0)
}

/// Picks the target named by argv[1]; prints the choices and exits when it names none.
func selectTarget(_ name: String?) {
    guard let name, let target = fuzzTargets.first(where: { $0.key == name })?.value else {
        let names = fuzzTargets.map(\.key).joined(separator: "|")
        TerminalOutput.write("usage: padgate-fuzz \(names) [libFuzzer options] [CORPUS...]   (tools/fuzz.sh builds and runs it)\n")
        exit(2)
    }
    selectedTarget = target
}

#if FUZZING
/// libFuzzer's documented entry for programs with their own main().
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// SwiftPM routes an executable's main to `<Module>_main`; the fuzz build takes it over here and hands
/// libFuzzer the arguments without the target name.
@_cdecl("PadgateFuzz_main")
func fuzzerMain(argc: CInt, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    guard let argv, argc >= 2 else { selectTarget(nil); return 2 }
    writeSeedsIfAsked((1..<Int(argc)).map { String(cString: argv[$0]!) })
    selectTarget(String(cString: argv[1]!))
    let remaining = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: Int(argc))
    remaining[0] = argv[0]
    for index in 2..<Int(argc) { remaining[index - 1] = argv[index] }
    remaining[Int(argc) - 1] = nil
    var count = argc - 1
    var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = remaining
    return LLVMFuzzerRunDriver(&count, &vector, fuzzOneInput)
}
#else
@main
enum Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        writeSeedsIfAsked(Array(arguments))
        selectTarget(arguments.first)
        for path in arguments.dropFirst() {
            guard let bytes = FileManager.default.contents(atPath: path) else { print("cannot open \(path)"); exit(1) }
            bytes.withUnsafeBytes { selectedTarget($0) }
            print("ok \(path) (\(bytes.count) bytes)")
        }
    }
}
#endif
