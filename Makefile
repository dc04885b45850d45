# padgate: the two commands a person needs are `make demo` and `make test`; both install what
# they need first (Debian packages through apt, the test guest's kernel).
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
export PATH := $(dir $(SWIFT)):$(PATH)
# Two compile jobs a core: a build shares the machine with whatever else runs (on a loaded CI
# machine, one job a core got half of it; docs/testing.md), and idle it costs nothing.
BUILD_JOBS ?= $(shell echo $$(( $$(nproc) * 2 )))

.PHONY: all deps build release udev-rules test test-repeat test-unit test-devices test-package demo demo-guest bench bench-forward bench-hostile bench-latency bench-rumble bench-haptics fuzz fuzz-long install install-udev uninstall deb dist test-dist clean guest

all: build

deps:
	@tools/install-deps.sh

build: deps
	$(SWIFT) build -j $(BUILD_JOBS)

# Unit tests on this machine (device tests skip loudly here if /dev/uhid is missing), beside the
# device tests against the real kernel drivers: directly, or in the QEMU guest (tools/test-devices.sh).
# Ends with each phase's wall time (tools/test-all.sh).
test:
	tools/test-all.sh

# The flake hunter (docs/testing.md): CLASSES (comma-separated, or all) N times in one boot per
# kernel of KERNELS, LOADED=1 with both cores busy; a table per test.
N ?= 5
KERNELS ?= 6.12
test-repeat: deps
	tools/test-repeat.sh -n $(N) --kernels "$(KERNELS)" $(if $(filter 1,$(LOADED)),--loaded) $(or $(CLASSES),all)

# The service unit, `make install DESTDIR=…` and the .deb (a static-stdlib release build).
test-package: deps
	tools/test-package.sh

test-unit: deps
	$(SWIFT) test

test-devices: deps
	$(SWIFT) build --build-tests -j $(BUILD_JOBS)
	tools/test-devices.sh

# Every kernel line the device tests boot (tools/guest/kernels.conf).
guest: deps
	for k in $$(awk '!/^#/ && NF {print $$1}' tools/guest/kernels.conf); do PADGATE_GUEST_KERNEL=$$k tools/guest/setup.sh || exit 1; done

demo: deps
	$(SWIFT) build -j $(BUILD_JOBS)
	tools/demo.sh

demo-guest: deps
	$(SWIFT) build -j $(BUILD_JOBS)
	PADGATE_DEMO_GUEST=1 tools/demo.sh

bench: deps
	tools/bench-codecs.sh
	tools/bench-forward.sh
	tools/bench-hostile.sh
	tools/bench-rumble.sh
	tools/bench-latency.sh
	tools/bench-haptics.sh

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

bench-haptics: deps
	tools/bench-haptics.sh

fuzz: deps
	tools/fuzz.sh $(or $(SECONDS),30)

# The long run docs/fuzzing.md reports: 10 million executions on every target.
fuzz-long: deps
	tools/fuzz.sh --runs 10000000

# The rules file from the families' ids (a unit test holds the two equal).
udev-rules: build
	$$($(SWIFT) build --show-bin-path)/padgate udev-rules > udev/70-padgate.rules

install-udev:
	install -m 0644 udev/70-padgate.rules /etc/udev/rules.d/70-padgate.rules
	install -m 0644 udev/modules-load.d/padgate.conf /etc/modules-load.d/padgate.conf
	udevadm control --reload && udevadm trigger

# `make install` / `make uninstall` (PREFIX, DESTDIR): the release binary (Swift's standard library
# linked in, so the machine needs no toolchain), udev rules, modules-load file, the service unit and
# its system user, shell completions and the man page. PADGATE_BIN installs another build.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share
UDEVDIR ?= /etc/udev/rules.d
MODULESLOADDIR ?= /etc/modules-load.d
UNITDIR ?= /etc/systemd/system
SYSUSERSDIR ?= /etc/sysusers.d
RELEASE_BIN := .build/release/padgate
PADGATE_BIN ?= $(RELEASE_BIN)

release: deps
	$(SWIFT) build -c release --static-swift-stdlib --product padgate -j $(BUILD_JOBS)

# The release build runs whenever the release binary is the one installed (swift build is incremental).
install: $(if $(filter $(RELEASE_BIN),$(PADGATE_BIN)),release)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(UDEVDIR) $(DESTDIR)$(MODULESLOADDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(DATADIR)/bash-completion/completions \
		$(DESTDIR)$(DATADIR)/zsh/site-functions $(DESTDIR)$(DATADIR)/fish/vendor_completions.d
	install -m 0755 $(PADGATE_BIN) $(DESTDIR)$(BINDIR)/padgate
	install -m 0644 udev/70-padgate.rules udev/71-padgate-serve.rules $(DESTDIR)$(UDEVDIR)/
	install -m 0644 udev/modules-load.d/padgate.conf $(DESTDIR)$(MODULESLOADDIR)/padgate.conf
	install -m 0644 udev/sysusers.d/padgate.conf $(DESTDIR)$(SYSUSERSDIR)/padgate.conf
	sed 's|@BINDIR@|$(BINDIR)|' udev/padgate-serve.service.in > $(DESTDIR)$(UNITDIR)/padgate-serve.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/padgate-serve.service
	$(PADGATE_BIN) --generate-completion-script bash > $(DESTDIR)$(DATADIR)/bash-completion/completions/padgate
	$(PADGATE_BIN) --generate-completion-script zsh > $(DESTDIR)$(DATADIR)/zsh/site-functions/_padgate
	$(PADGATE_BIN) --generate-completion-script fish > $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/padgate.fish
	tools/make-man.sh $(PADGATE_BIN) | gzip -9n > $(DESTDIR)$(MANDIR)/man1/padgate.1.gz
	@[ -n "$(DESTDIR)" ] || echo "installed; for the host service: sudo systemd-sysusers && sudo udevadm control --reload && sudo udevadm trigger && sudo systemctl daemon-reload && sudo systemctl enable --now padgate-serve"

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/padgate $(DESTDIR)$(MANDIR)/man1/padgate.1.gz \
		$(DESTDIR)$(UDEVDIR)/70-padgate.rules $(DESTDIR)$(UDEVDIR)/71-padgate-serve.rules \
		$(DESTDIR)$(MODULESLOADDIR)/padgate.conf $(DESTDIR)$(SYSUSERSDIR)/padgate.conf \
		$(DESTDIR)$(UNITDIR)/padgate-serve.service \
		$(DESTDIR)$(DATADIR)/bash-completion/completions/padgate $(DESTDIR)$(DATADIR)/zsh/site-functions/_padgate \
		$(DESTDIR)$(DATADIR)/fish/vendor_completions.d/padgate.fish

# A Debian package of the release binary: runs on Debian 12 without a Swift toolchain.
deb: release
	tools/make-deb.sh $(RELEASE_BIN)

# A tarball for any Linux with glibc 2.36 or newer (SteamOS, Fedora, Arch, Ubuntu): the release
# binary, the libraries a distribution may lack, rules, units, completions, man page and install.sh
# (docs/install.md). test-dist unpacks it in a Debian 13 root without the toolchain.
dist: release
	tools/make-dist.sh $(RELEASE_BIN)

test-dist: dist
	tools/test-dist.sh $$(ls -t .build-dist/padgate-*.tar.gz | head -1)

clean:
	rm -rf .build .build-fuzz .guest .build-deb .build-dist
