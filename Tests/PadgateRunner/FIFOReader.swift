import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A FIFO's reader: blocks in open until the writer comes, then reads until it closes.
public func readToEnd(_ path: String) -> Data? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var data = Data(), buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = read(fd, &buffer, buffer.count)
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return data }
        data.append(contentsOf: buffer[..<n])
    }
}
