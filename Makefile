# The README's two commands are `go run ./cmd/agentruns-contract` (also
# `make contract`) and `make test`; `.ci/run` calls `make test`.
GO ?= go

.PHONY: mock contract test test-go test-ts lint bench fuzz fuzz-smoke mutants

mock:
	$(GO) run ./cmd/agentruns-mock

contract:
	$(GO) run ./cmd/agentruns-contract

test: lint test-go mutants test-ts fuzz-smoke

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test-go:
	$(GO) test -race ./...

# The suite against plausible server mistakes (steps/mutants_test.go): prints
# what killed each mutant and the kill rate in control and polling mode, and
# fails if one survives; then against every legal variant of the reference
# server and of the mock (steps/reference_variants_test.go,
# steps/legal_variants_test.go), which it must pass. They run without -race
# (see the files), so test-go, which has -race, leaves them out.
mutants:
	$(GO) test ./steps/ -run '^(TestMutants|TestSuitePassesAgainstTheReferenceServerVariants|TestSuitePassesAgainstTheMockMadeToChooseOtherwise|TestARunThatEndsInErrorOnItsOwnIsInconclusive)$$' -count=1 -v

test-ts:
	cd clients/typescript && npm install --no-audit --no-fund --silent && npm test

# The mock side by side with Prism and a minimal Go server, then the Go
# benchmarks at scale; see the README's "Performance" section.
bench:
	GO=$(GO) bash bench/run.sh

# The mock's fuzz targets: create bodies, list queries, cursors (forged and
# validly signed). `make fuzz` runs each for FUZZTIME, a duration; `make test`
# runs each for FUZZ_SMOKE_TIME, a count of inputs ("500x"): a time-bounded
# fuzz run can end in "context deadline exceeded" on a busy machine (a known
# Go toolchain issue), a count-bounded one cannot. A crasher is written to
# mockserver/testdata/fuzz/<target>/: fix it and keep the file, as a seed
# that every `go test` then runs.
FUZZTIME ?= 30s
FUZZ_SMOKE_TIME ?= 500x
FUZZ_TARGETS := FuzzCreateBody FuzzListQuery FuzzCursor FuzzSignedCursor

fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  echo "fuzzing $$t for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) ./mockserver/ || exit 1; \
	done

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZ_SMOKE_TIME)
