.PHONY: mock test
mock:
	go run ./cmd/agentruns-mock

test:
	go vet ./...
	go test -race ./...
