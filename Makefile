# The README's two commands are `make mock` (or `go run ./cmd/agentruns-mock`)
# and `make test`.
GO ?= go

.PHONY: mock contract test test-go test-ts lint bench

mock:
	$(GO) run ./cmd/agentruns-mock

contract:
	$(GO) run ./cmd/agentruns-contract

test: lint test-go test-ts

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test-go:
	$(GO) test -race ./...

test-ts:
	cd clients/typescript && npm install --no-audit --no-fund --silent && npm test

# The mock side by side with Prism and a minimal Go server, then the Go
# benchmarks at scale; see the README's "Performance" section.
bench:
	GO=$(GO) bash bench/run.sh
