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
