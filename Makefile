# Switchboard: the two commands a new user needs are `make run` and `make test`.
GO      ?= go
BIN     ?= bin/switchboard
PKG     ?= examples/quickstart
# go-sqlite3 needs cgo; a build without it compiles but cannot open a database.
export CGO_ENABLED = 1

.PHONY: build run test lint bench fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/switchboard

## run: the quickstart stack on the embedded default (SQLite), with the mock SMS gateway.
run: build
	./$(BIN) dev $(PKG)

## test: every test, with the race detector (this is what CI runs).
test:
	$(GO) test -race -count=1 -timeout 20m ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	staticcheck ./...

## bench: the standard scenarios of `switchboard bench` (SPEC section 10), then the Go
## benchmarks of the hot paths.
bench: build
	./$(BIN) bench --messages 50000 --callers 64 -o json
	./$(BIN) bench --messages 600 --callers 32 --gateway-latency 200ms -o json
	./$(BIN) bench --messages 3000 --callers 32 --channel mixed -o json
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2000x ./...

clean:
	rm -rf bin
