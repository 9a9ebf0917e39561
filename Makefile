# The README's two commands are `make contract` (build, then run the suite
# against the bundled mock) and `make test` (every test); `.ci/run` calls
# `make test`.
GO ?= go

.PHONY: build mock contract test test-go test-ts lint bench fuzz fuzz-smoke mutants client-facts client-facts-npm client-facts-python image test-image

# The first build compiles every dependency: measured at about 620
# CPU-seconds (see the README), so minutes even on idle cores. -v names each
# package as it is compiled, so the first build is never silent; later builds
# take seconds.
build:
	@echo "building bin/agentruns-contract, bin/agentruns-mock, bin/agentruns-clientgate and bin/agentruns-drift: a first build compiles every dependency, about 10 CPU-minutes (5 minutes or more on two cores); later builds take seconds"
	$(GO) build -v -o bin/ ./cmd/agentruns-contract ./cmd/agentruns-mock ./cmd/agentruns-clientgate ./cmd/agentruns-drift

# The image (Containerfile): both commands compiled static into bin/image/,
# then built with podman, or docker where podman is not installed. podman
# writes Docker's image format, the one that keeps a HEALTHCHECK.
# CONTAINER_ENGINE overrides the choice (the image test gives podman its own
# storage); IMAGE names the image.
IMAGE ?= agentruns:latest
CONTAINER_ENGINE ?= $(shell command -v podman >/dev/null 2>&1 && echo podman || (command -v docker >/dev/null 2>&1 && echo docker))
image:
	@test -n "$(CONTAINER_ENGINE)" || { echo "make image needs podman or docker"; exit 2; }
	rm -rf bin/image && mkdir -p bin/image/state
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags=-s -o bin/image/ ./cmd/agentruns-contract ./cmd/agentruns-mock
	cp /etc/ssl/certs/ca-certificates.crt bin/image/
	$(CONTAINER_ENGINE) build $(if $(findstring podman,$(CONTAINER_ENGINE)),--format docker) -t $(IMAGE) -f Containerfile bin/image

# The image's test (deploy/image_test.go, build tag image): builds it with
# podman and runs the binaries out of its exported file system. Not part of
# `make test`: its first run compiles every dependency again, static,
# about as long as the first `make build`; later runs take about a minute
# (the build, the export, the read-only suite). .ci/run runs it after
# `make test`.
test-image:
	$(GO) test -tags image -count=1 -timeout 30m -v -run '^TestImage' ./deploy/

mock: build
	bin/agentruns-mock

contract: build
	bin/agentruns-contract

# After lint, the four test jobs run at once: one of them alone leaves a core
# idle much of the time (a package's tests run one after another, a polling
# suite mostly waits), and none depends on another. Each job's output is
# printed whole when it ends, so the log reads as if they ran in turn. If
# any job fails, make fails once the others have ended.
test: lint
	@echo "running test-go, mutants, test-ts and fuzz-smoke at once; each prints its output when it ends"
	@$(MAKE) --no-print-directory --output-sync=target -j4 test-go mutants test-ts fuzz-smoke

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# The race detector slows the mock's and the suite's packages several times
# over; on two shared cores one of them can pass go test's ten-minute
# default per package, so the bound is longer (CI allows 90 minutes).
test-go:
	$(GO) test -race -timeout 30m ./...

# The suite against plausible server mistakes (steps/mutants_test.go): prints
# what killed each mutant and the kill rate in control and polling mode, and
# fails if one survives; then against every legal variant of the reference
# server and of the mock (steps/reference_variants_test.go,
# steps/legal_variants_test.go), which it must pass; and the other tests
# that judge servers by the suite's verdicts (broken servers caught, by the
# suite and by the proxy; see steps/verdicts_test.go and
# steps/proxy_test.go), the proxy's clean verdict in front of the reference
# server (e2e/proxy_test.go), and the client versions the bundled mock and
# the reference server break (e2e/client_versions_test.go). They run without -race
# (see the files), so test-go, which has -race, leaves them out. The
# mutants alone took three and a half minutes on two cores under a load
# average of 15 (about 75 CPU-seconds), longer when a race-detector build
# runs beside them: past go test's ten-minute default on a busier machine,
# hence the longer bound. Four suites run at once (-parallel 4, not go
# test's one per core): a suite that polls spends most of its time waiting
# for runs to move and links to expire, not computing.
mutants:
	$(GO) test ./steps/ ./e2e/ -timeout 20m -parallel 4 -run '^(TestMutants|TestMutantsOutOfReachSayWhy|TestExploreFindsMutants|TestAnExploredFindingsScenarioFailsOnItsMutant|TestExploreFindsNothingOnTheReferenceServerVariants|TestSuitePassesAgainstTheReferenceServerVariants|TestSuitePassesAgainstTheMockMadeToChooseOtherwise|TestARunThatEndsInErrorOnItsOwnIsInconclusive|TestSuiteCatchesBrokenServers|TestRunsEndedBeforeAClaimSkipTheConversationScenarios|TestProxySeesNoViolationInFrontOfTheReferenceServer|TestProxyReportsWhatEachBrokenServerDoes|TestServersBuiltToAClientsSurfaceBreakNoneOfIt)$$' -count=1 -v

test-ts:
	cd clients/typescript && npm install --no-audit --no-fund --silent && npm test

# The mock side by side with Prism and a minimal Go server, then the Go
# benchmarks at scale; see the README's "Performance" section.
bench:
	GO=$(GO) bash bench/run.sh

# The mock's fuzz targets: create bodies, list queries, cursors (forged and
# validly signed), durations and instants through every input that takes
# them (FuzzDurations: no value may leave a listing or a get unanswered),
# the typed reader of create bodies against the OpenAPI check, and the
# state file's run reader against the general decoder, the title order's
# case-blind comparison against strings.ToLower, each as
# package:target. `make fuzz` runs each for FUZZTIME, a duration; `make test`
# runs each for FUZZ_SMOKE_TIME, a count of inputs ("500x"): a time-bounded
# fuzz run can end in "context deadline exceeded" on a busy machine (a known
# Go toolchain issue), a count-bounded one cannot. A crasher is written to
# <package>/testdata/fuzz/<target>/: fix it and keep the file, as a seed
# that every `go test` then runs.
FUZZTIME ?= 30s
FUZZ_SMOKE_TIME ?= 500x
FUZZ_TARGETS := mockserver:FuzzCreateBody mockserver:FuzzListQuery mockserver:FuzzCursor mockserver:FuzzDurations \
	mockserver:FuzzSignedCursor mockserver:FuzzCreateReader mockserver/store:FuzzRunReader \
	mockserver/store:FuzzCompareLower

fuzz:
	@for pt in $(FUZZ_TARGETS); do \
	  p=$${pt%%:*}; t=$${pt#*:}; \
	  echo "fuzzing $$t ($$p) for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) ./$$p/ || exit 1; \
	done

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZ_SMOKE_TIME)

# What each released official client reads from the API, one file per
# version in openapi/clientfacts (<language>-<version>.json; see
# docs/client-versions.md): the suite, the proxy and agentruns-clientgate
# judge answers and documents by them, and the newest TypeScript client's
# is also what the drift test holds openapi.yaml to (docs/openapi.md).
# Commit a rewritten file with the code that needs it.
#
# client-facts: a TypeScript client from its source. CLIENT is a checkout
# with its dependencies installed (npm install): its own TypeScript compiler
# reads it.
CLIENT ?=
client-facts:
	@test -n "$(CLIENT)" || { echo "usage: make client-facts CLIENT=/path/to/oz-sdk-typescript"; exit 2; }
	node openapi/clientfacts/extract.cjs "$(CLIENT)" | $(GO) run ./openapi/facts/gen -facts -client-dir openapi/clientfacts -
	$(GO) test ./openapi/... -run 'Newest|Published|ClientFacts' -count=1

# client-facts-npm: a TypeScript client as npm serves it, from the
# declaration files of its package. Needs only Node and npm: the package and
# a TypeScript compiler are installed into a temporary directory.
NPM_VERSION ?= 1.0.0-alpha.8
TYPESCRIPT_VERSION ?= 5.8.3
client-facts-npm:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  (cd "$$tmp" && { npm pack --silent oz-agent-sdk@$(NPM_VERSION) >/dev/null || { echo "npm has no oz-agent-sdk@$(NPM_VERSION) (npm view oz-agent-sdk versions lists those it has)" >&2; exit 1; }; } && tar -xzf oz-agent-sdk-*.tgz && \
	   npm install --silent --no-audit --no-fund --prefix "$$tmp/tsc" typescript@$(TYPESCRIPT_VERSION) >/dev/null) && \
	  node openapi/clientfacts/extract.cjs --typescript "$$tmp/tsc/node_modules/typescript" "$$tmp/package" | \
	  $(GO) run ./openapi/facts/gen -facts -client-dir openapi/clientfacts -
	$(GO) test ./openapi/... -run 'ClientFacts' -count=1

# client-facts-python: the Python client, from its public source (its package registry
# cannot be reached from here, so a checkout of the source is needed:
# git clone the client's repository, no install). The extractor reads the
# models with Python's own ast module; nothing of the client is imported.
client-facts-python:
	@test -n "$(CLIENT)" || { echo "usage: make client-facts-python CLIENT=/path/to/oz-sdk-python"; exit 2; }
	python3 openapi/clientfacts/extract_python.py "$(CLIENT)" | $(GO) run ./openapi/facts/gen -facts -client-dir openapi/clientfacts -
	$(GO) test ./openapi/... -run 'ClientFacts' -count=1
