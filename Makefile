# The README's two commands. Each installs what is missing, configures, builds with -j2 and goes.
BUILD ?= build/dev
JOBS ?= 2
SCENARIO ?= large-lr-mse

.PHONY: deps configure build run test bench clean

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

bench: build
	$(BUILD)/app/nanscope bench

clean:
	rm -rf build
