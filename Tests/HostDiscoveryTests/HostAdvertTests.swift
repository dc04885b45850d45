import HostDiscovery
import XCTest

/// A TXT record from the LAN is a stranger's bytes: only a whole, well-formed padgate advert is read.
final class HostAdvertTests: XCTestCase {
    let fingerprint = (0..<32).map { String(format: "%02x", $0) }.joined(separator: ":")
    func bytes(_ entries: [String]) -> [[UInt8]] { entries.map { Array($0.utf8) } }

    func testAnAdvertReadsBackAsWritten() {
        let advert = HostAdvert(protocolVersion: 1, fingerprint: fingerprint, pairingOpen: true, hostName: "living-room")
        XCTAssertEqual(advert.entries, ["v=1", "id=\(fingerprint)", "pin=1", "name=living-room"])
        XCTAssertEqual(HostAdvert(entries: bytes(advert.entries)), advert)
        XCTAssertTrue(advert.entries.allSatisfy { $0.utf8.count <= HostAdvert.maxEntryBytes })
    }

    func testTheFirstOfARepeatedKeyCountsAndUnknownKeysAreIgnored() {
        let read = HostAdvert(entries: bytes(["v=1", "id=\(fingerprint)", "pin=0", "pin=1", "name=box", "future=yes", "novalue"]))
        XCTAssertEqual(read?.pairingOpen, false)
        XCTAssertEqual(read?.hostName, "box")
    }

    func testMalformedOrPartialAdvertsAreNotRead() {
        let good = ["v=1", "id=\(fingerprint)", "pin=1", "name=box"]
        let broken: [[String]] = [
            [], Array(good.dropFirst()), ["v=x"] + good.dropFirst(), ["v=0"] + good.dropFirst(), ["v=99999999999999999999"] + good.dropFirst(),
            ["v=1", "id=zz", "pin=1", "name=box"], ["v=1", "id=\(fingerprint.dropLast(3))", "pin=1", "name=box"],
            ["v=1", "id=\(fingerprint)", "pin=yes", "name=box"], ["v=1", "id=\(fingerprint)", "pin=1", "name="],
            ["v=1", "id=\(fingerprint)", "pin=1", "name=a\u{1b}[2Jb"], ["v=1", "id=\(fingerprint)", "pin=1", "name=" + String(repeating: "x", count: 64)],
        ]
        for entries in broken { XCTAssertNil(HostAdvert(entries: bytes(entries)), "\(entries)") }
        XCTAssertNil(HostAdvert(entries: [[0xff, 0x3d, 0x31]] + bytes(Array(good.dropFirst()))), "not UTF-8")
        // Entries past the bound are not read at all, even if they would complete the advert.
        XCTAssertNil(HostAdvert(entries: bytes(Array(repeating: "x=1", count: HostAdvert.maxEntries) + good)))
        XCTAssertNil(HostAdvert(entries: [Array(("v=1" + String(repeating: " ", count: 300)).utf8)] + bytes(Array(good.dropFirst()))))
    }
}
