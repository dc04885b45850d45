import XCTest
@testable import PadFamilies

/// 3 kHz s8 to the pad's 48 kHz, 4 channels: coils on 2-3, linear between samples, full scale
/// near ±32767, the headphone pair silent.
final class CoilUpsamplerTests: XCTestCase {
    func testSamplesAreInterpolatedOntoTheCoilChannels() {
        var upsampler = CoilUpsampler()
        var period = [Int16](repeating: 99, count: 2 * 16 * 4)
        upsampler.fill(&period, from: [127, -127, 0, 64])
        let left = stride(from: 2, to: period.count, by: 4).map { period[$0] }
        let right = stride(from: 3, to: period.count, by: 4).map { period[$0] }
        XCTAssertTrue(stride(from: 0, to: period.count, by: 4).allSatisfy { period[$0] == 0 && period[$0 + 1] == 0 }, "headphones silent")
        // From the last sample (0 at the start) to 127·258 = 32766 in 16 steps, then down to 0.
        XCTAssertEqual(left[15], 32_766)
        XCTAssertEqual(left[7], 32_766 / 2)
        XCTAssertEqual(left[31], 0)
        XCTAssertEqual(right[15], -32_766)
        XCTAssertEqual(right[31], 64 * 258)
        XCTAssertTrue(zip(left.prefix(16), left.prefix(16).dropFirst()).allSatisfy { $0 < $1 }, "a ramp, not a step")
    }
}
