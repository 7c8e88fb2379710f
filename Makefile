# The README's two commands. Each installs what is missing, configures, builds with -j2 and goes.
BUILD ?= build/dev
JOBS ?= 2
SCENARIO ?= large-lr-mse
PYTHON ?= /usr/bin/python3

.PHONY: deps configure build run test bench package clean

deps:
	bash tools/install-deps.sh $(DEPS_ARGS)

configure: deps
	cmake --preset dev

build: configure
	cmake --build $(BUILD) -j$(JOBS)

run: build
	$(BUILD)/app/nanscope --scenario $(SCENARIO)

# Target-specific: the deps prerequisite of `test` also installs the test-only packages.
test: DEPS_ARGS = --tests
test: build
	QT_QPA_PLATFORM=offscreen ctest --test-dir $(BUILD) --output-on-failure --no-tests=error -j$(JOBS)

# The Debian packages (nanscope, nanscope-headless) and the recorder's wheel, in $(BUILD)/packages.
# The wheel is built with Debian's setuptools (no network); its python/build is git-ignored.
package: DEPS_ARGS = --package
package: build
	cd $(BUILD) && cpack -G DEB -B packages
	$(PYTHON) -m pip wheel --no-build-isolation --no-deps --no-index -w $(BUILD)/packages ./python

bench: build
	$(BUILD)/app/nanscope bench

clean:
	rm -rf build
