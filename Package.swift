// swift-tools-version:6.0
import PackageDescription

// System libraries come from Debian's -dev packages, found through pkg-config.
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, path: "Sources/\(name)", pkgConfig: pkgConfig, providers: [.apt([apt])])
}

let package = Package(
    name: "padgate",
    products: [
        .executable(name: "padgate", targets: ["padgate"]),
        .library(name: "HIDCodecs", targets: ["HIDCodecs"]),
        // HIDCodecs fuzzers (tools/fuzz.sh) and benchmark (tools/bench-codecs.sh)
        .executable(name: "padgate-fuzz", targets: ["PadgateFuzz"]),
        .executable(name: "CodecBench", targets: ["CodecBench"]),
        .executable(name: "RumbleBench", targets: ["RumbleBench"]),
        .executable(name: "ForwardBench", targets: ["ForwardBench"]),
        .executable(name: "LatencyBench", targets: ["LatencyBench"]),
        .executable(name: "HapticsBench", targets: ["HapticsBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    ],
    targets: [
        // Time as one type: a point on CLOCK_MONOTONIC in integer nanoseconds, and Duration's
        // conversions. Pure; reading the clock is PadSystem's.
        .target(name: "MonotonicTime"),
        systemLibrary("CUdev", pkgConfig: "libudev", apt: "libudev-dev"),
        systemLibrary("CEvdev", pkgConfig: "libevdev", apt: "libevdev-dev"),
        systemLibrary("CHidapi", pkgConfig: "hidapi-hidraw", apt: "libhidapi-dev"),
        systemLibrary("COpenSSL", pkgConfig: "openssl", apt: "libssl-dev"),
        systemLibrary("CZlib", pkgConfig: "zlib", apt: "zlib1g-dev"),
        systemLibrary("CAlsa", pkgConfig: "alsa", apt: "libasound2-dev"),
        systemLibrary("COpus", pkgConfig: "opus", apt: "libopus-dev"),
        // Not through pkg-config: avahi-client's cflags carry -D_REENTRANT, which SwiftPM refuses
        // noisily; its headers are in /usr/include and the module map links it.
        .systemLibrary(name: "CAvahi", path: "Sources/CAvahi", providers: [.apt(["libavahi-client-dev"])]),
        // Kernel UAPI headers (uhid, uinput, hidraw, evdev ioctls) as inline C helpers.
        .target(name: "CLinuxInput", path: "Sources/CLinuxInput"),

        // The system layer under PadDevices and Transport (as swift-system is to NIO): owned
        // descriptors, typed errno, the one EINTR retry, poll, wake pipes, mailboxes, timers,
        // thread priority, signals, sockets and IPv4/IPv6 addresses, and where log lines go.
        .target(name: "PadSystem", dependencies: ["MonotonicTime", "CLinuxInput", .product(name: "Logging", package: "swift-log")]),
        // Pure byte-level logic: report descriptors, controller reports, calibration, trigger effects.
        .target(name: "HIDCodecs", dependencies: ["CZlib"]),
        // Pure feedback logic (rumble renderer, patterns): no system library; motor levels from HIDCodecs.
        .target(name: "Feedback", dependencies: ["MonotonicTime", "HIDCodecs"]),
        // Pure: a USB device as USB/IP carries it (vhci-hcd's requests and replies), its descriptors
        // and the control requests a host stack makes of it.
        .target(name: "USBDevice"),
        // Linux device access: udev enumeration and hot-plug, evdev, hidraw, uhid, uinput, USB/IP on vhci-hcd, ALSA playback, Opus.
        .target(name: "PadDevices", dependencies: ["MonotonicTime", "USBDevice",
            "PadSystem", "HIDCodecs", "Feedback", "CUdev", "CEvdev", "CHidapi", "CAlsa", "COpus", "CLinuxInput",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Pure: the forwarding protocol's messages, their encoding, and snapshot-diff state.
        .target(name: "WireProtocol", dependencies: ["MonotonicTime", "HIDCodecs"]),
        // The link: sealed UDP datagrams (AES-GCM, replay window), TLS control, pairing.
        .target(name: "Transport", dependencies: ["MonotonicTime", "PadSystem", "COpenSSL"]),
        // Finding hosts on the LAN: DNS-SD over mDNS through the system's avahi-daemon (announce, browse).
        .target(name: "HostDiscovery", dependencies: ["MonotonicTime", "PadSystem", "Transport", "CAvahi", .product(name: "Logging", package: "swift-log")]),
        // One folder per pad family (as SDL's HIDAPI drivers): its emulated pad, the host's pad for
        // it, its identity data and its output to the physical pad; PadDriver.swift lists them.
        // The families' pure report layouts are HIDCodecs' (tested without devices).
        .target(name: "PadFamilies", dependencies: ["MonotonicTime", "PadSystem", "HIDCodecs", "Feedback", "USBDevice", "PadDevices", "WireProtocol",
                                                    .product(name: "Logging", package: "swift-log")]),
        // The client: pad sources, the forwarding loop, feedback to the physical pads.
        .target(name: "PadClient", dependencies: ["MonotonicTime", "PadSystem", "WireProtocol", "Transport", "PadDevices", "PadFamilies", "HIDCodecs", "Feedback",
                                                  .product(name: "Logging", package: "swift-log")]),
        // The host: virtual pads for forwarded ones, leases, feedback from games.
        .target(name: "PadHost", dependencies: ["MonotonicTime", "PadSystem", "WireProtocol", "Transport", "PadDevices", "PadFamilies", "HIDCodecs", "Feedback",
                                                .product(name: "Logging", package: "swift-log")]),
        .executableTarget(name: "padgate", dependencies: ["MonotonicTime",
            "HostDiscovery", "PadSystem", "HIDCodecs", "PadDevices", "PadFamilies", "WireProtocol", "Transport", "PadHost", "PadClient", "Feedback",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        .testTarget(name: "HIDCodecsTests", dependencies: ["HIDCodecs", "TestDecoders", "WireProtocol"], resources: [.copy("Fixtures")]),
        .testTarget(name: "MonotonicTimeTests", dependencies: ["MonotonicTime"]),
        .testTarget(name: "USBDeviceTests", dependencies: ["USBDevice"]),
        .testTarget(name: "WireProtocolTests", dependencies: ["MonotonicTime", "WireProtocol", "HIDCodecs", "SeededRandom"]),
        .testTarget(name: "TransportTests", dependencies: ["MonotonicTime", "Transport", "PadSystem"]),
        .testTarget(name: "HostDiscoveryTests", dependencies: ["HostDiscovery"]),
        .testTarget(name: "PadClientTests", dependencies: ["PadClient", "PadDevices", "PadFamilies", "HIDCodecs", "WireProtocol", "LogCapture", "PadSystem", "MonotonicTime"]),
        .testTarget(name: "PadHostTests", dependencies: ["MonotonicTime", "LogCapture", "PadSystem", "PadHost", "PadClient", "PadDevices", "PadFamilies", "WireProtocol", "Transport", "HIDCodecs", "Feedback"]),
        .testTarget(name: "FeedbackTests", dependencies: ["MonotonicTime", "Feedback", "HIDCodecs", "SeededRandom"]),
        .testTarget(name: "PadDevicesTests", dependencies: ["PadDevices", "PadFamilies", "WireProtocol", "HIDCodecs", "Feedback", "CLinuxInput", "USBDevice"], resources: [.copy("Fixtures")]),
        .testTarget(name: "PadSystemTests", dependencies: ["PadSystem", "MonotonicTime", "CLinuxInput", "LogCapture", "PadgateRunner", .product(name: "Logging", package: "swift-log")]),
        // Needs /dev/uhid and /dev/uinput: runs in the test guest (tools/guest) or on a desktop Linux.
        .testTarget(name: "DeviceTests", dependencies: ["MonotonicTime", "PadSystem", "PadDevices", "PadFamilies", "HIDCodecs", "Feedback", "WireProtocol", "PadClient", "PadgateRunner", "TestDecoders", "COpus"]),
        // The padgate command line as a person runs it, where no device is needed (error messages, decoding).
        .testTarget(name: "PadgateCLITests", dependencies: ["PadSystem", "MonotonicTime", "PadgateRunner", "TestDecoders"]),
        // Runs the built padgate executable (next to the test bundle) for the command-line tests.
        .target(name: "PadgateRunner", dependencies: ["MonotonicTime", "PadSystem"], path: "Tests/PadgateRunner"),
        // A logger whose messages a test can read.
        .target(name: "LogCapture", dependencies: ["MonotonicTime", "PadSystem", .product(name: "Logging", package: "swift-log")], path: "Tests/LogCapture"),
        // Decoders written from the documented layouts, not from padgate's encoders.
        .target(name: "TestDecoders", path: "Tests/TestDecoders"),
        // A seeded generator for tests and benchmarks.
        .target(name: "SeededRandom", path: "Tests/SeededRandom"),

        // Fuzz targets (codecs, pad families and every network parser) behind one libFuzzer driver; a plain build replays input files instead.
        .executableTarget(name: "PadgateFuzz", dependencies: ["MonotonicTime", .product(name: "Logging", package: "swift-log"), "PadSystem", "HIDCodecs", "Feedback", "WireProtocol", "Transport", "PadHost", "PadClient", "PadDevices", "PadFamilies"], path: "Fuzz/PadgateFuzz"),
        // Decoder benchmark; CMallocCounter interposes malloc to count allocations (benchmark only).
        .target(name: "CMallocCounter", path: "Benchmarks/CMallocCounter"),
        // Rumble renderer through a seeded lossy channel against SDL's keep-alive policy (tools/bench-rumble.sh).
        .executableTarget(name: "RumbleBench", dependencies: ["MonotonicTime", "Feedback", "HIDCodecs", "SeededRandom"], path: "Benchmarks/RumbleBench"),
        .executableTarget(name: "ForwardBench", dependencies: ["MonotonicTime", .product(name: "Logging", package: "swift-log"), "PadSystem", "HIDCodecs", "WireProtocol", "Transport", "PadHost", "PadClient", "PadDevices", "PadFamilies", "CMallocCounter"],
                          path: "Benchmarks/ForwardBench"),
        // End-to-end latency through the real `padgate` binaries against the kernel's floor, in the guest (tools/bench-latency.sh).
        .executableTarget(name: "LatencyBench", dependencies: ["MonotonicTime", "PadSystem", "HIDCodecs", "PadDevices", "PadFamilies", "CMallocCounter"], path: "Benchmarks/LatencyBench"),
        .executableTarget(name: "HapticsBench", dependencies: ["MonotonicTime", "Feedback", "HIDCodecs", "PadFamilies", "Transport", "WireProtocol", "CMallocCounter"],
                          path: "Benchmarks/HapticsBench"),
        .executableTarget(name: "CodecBench", dependencies: ["HIDCodecs", "CMallocCounter"], path: "Benchmarks/CodecBench"),
    ],
    swiftLanguageModes: [.v6]
)
