# padgate: the two commands a person needs are `make demo` and `make test`; both install what
# they need first (Debian packages through apt, the test guest's kernel).
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
export PATH := $(dir $(SWIFT)):$(PATH)

.PHONY: all deps build test test-unit test-devices demo demo-guest bench bench-forward bench-hostile bench-latency bench-rumble fuzz fuzz-long install-udev clean guest

all: build

deps:
	@tools/install-deps.sh

build: deps
	$(SWIFT) build

# Unit tests on this machine (device tests skip loudly here if /dev/uhid is missing), then the
# device tests against the real kernel drivers: directly, or in the QEMU guest (tools/test-devices.sh).
DIRECT_DEVICES := $(shell [ -w /dev/uhid ] && [ -w /dev/uinput ] && echo yes)
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build $(if $(DIRECT_DEVICES),--skip DeviceTests)
	tools/test-devices.sh

test-unit: deps
	$(SWIFT) test

test-devices: deps
	$(SWIFT) build --build-tests
	tools/test-devices.sh

guest: deps
	tools/guest/setup.sh

demo: deps
	$(SWIFT) build
	tools/demo.sh

demo-guest: deps
	$(SWIFT) build
	PADGATE_DEMO_GUEST=1 tools/demo.sh

bench: deps
	tools/bench-codecs.sh
	tools/bench-forward.sh
	tools/bench-hostile.sh
	tools/bench-rumble.sh
	tools/bench-latency.sh

bench-hostile: deps
	tools/bench-hostile.sh

# End to end through the real serve and forward against the kernel's floor (boots the test guest
# where /dev/uhid is missing).
bench-latency: deps
	tools/bench-latency.sh

bench-forward: deps
	tools/bench-forward.sh

bench-rumble: deps
	tools/bench-rumble.sh

fuzz: deps
	tools/fuzz.sh $(or $(SECONDS),30)

# The long run docs/fuzzing.md reports: 10 million executions on every target.
fuzz-long: deps
	tools/fuzz.sh --runs 10000000

install-udev:
	install -m 0644 udev/70-padgate.rules /etc/udev/rules.d/70-padgate.rules
	install -m 0644 udev/modules-load.d/padgate.conf /etc/modules-load.d/padgate.conf
	udevadm control --reload && udevadm trigger

clean:
	rm -rf .build .build-fuzz .guest
