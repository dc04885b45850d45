import Glibc

/// Runs a fuzz target over files named on the command line, so a crash found by libFuzzer
/// can be replayed (and debugged) from a plain debug build.
public enum FuzzReplay {
    public static func run(_ target: (UnsafePointer<UInt8>, Int) -> CInt) {
        let paths = CommandLine.arguments.dropFirst()
        if paths.isEmpty { print("usage: \(CommandLine.arguments[0]) INPUT...   (replays inputs; fuzz with tools/fuzz.sh)") }
        for path in paths {
            guard let file = fopen(path, "rb") else { print("cannot open \(path)"); exit(1) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = fread(&chunk, 1, chunk.count, file)
                if n <= 0 { break }
                bytes.append(contentsOf: chunk[0..<n])
            }
            fclose(file)
            bytes.append(0)  // keep a valid pointer for empty inputs
            _ = bytes.withUnsafeBufferPointer { target($0.baseAddress!, $0.count - 1) }
            print("ok \(path) (\(bytes.count - 1) bytes)")
        }
    }
}

#if FUZZING
/// libFuzzer's documented entry for programs that keep their own main(); SwiftPM routes an executable's
/// main to `<Target>_main`, so the fuzz build defines that and hands control to libFuzzer here.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

extension FuzzReplay {
    public static func runLibFuzzer(argc: CInt, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt {
        var count = argc
        var vector = argv
        return LLVMFuzzerRunDriver(&count, &vector, callback)
    }
}
#endif
