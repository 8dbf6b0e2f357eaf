# Switchboard: the two commands a new user needs are `make run` and `make test`.
GO      ?= go
BIN     ?= bin/switchboard
PKG     ?= examples/quickstart
# go-sqlite3 needs cgo; a build without it compiles but cannot open a database.
export CGO_ENABLED = 1

.PHONY: build run test lint lint-go lint-openapi docs bench bench-tools fuzz clean

## build: bin/switchboard, with the version `switchboard version` prints: `git describe` of the
## checkout (a tag, commits since it and the commit, -dirty with uncommitted changes), or
## VERSION=… when given. The revision, its time and the modified flag come from Go's VCS stamping
## (absent under GOFLAGS=-buildvcs=false, as in CI).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/switchboard

## run: the quickstart stack on the embedded default (SQLite), with the mock SMS gateway.
run: build
	./$(BIN) dev $(PKG)

## test: every test, with the race detector (this is what CI runs). cmd/internal/testsummary
## prints what go test prints, then the tests that skipped, each with what it needs.
test:
	@$(GO) build -o bin/testsummary ./cmd/internal/testsummary
	./bin/testsummary $(GO) test -json -race -count=1 -timeout 20m ./...

## lint: every check CI runs besides the tests (.ci/run calls it before `make test`).
lint: lint-go lint-openapi

STATICCHECK ?= $(shell $(GO) env GOPATH)/bin/staticcheck

## lint-go: gofmt, go vet, staticcheck, a tidy go.mod, and the import rules of
## docs/architecture.md.
lint-go:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@test -x $(STATICCHECK) || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	$(STATICCHECK) ./...
	$(GO) mod tidy -diff
	$(GO) test -count=1 ./cmd/internal/importrules

## lint-openapi: engine/api/openapi.json against Redocly CLI's recommended rules, with the
## version pinned in .ci/openapi/package-lock.json; any error or warning fails.
lint-openapi:
	cd .ci/openapi && npm ci --no-audit --no-fund --loglevel=error && npm run --silent lint

## docs: regenerate the generated parts of docs/: the command reference (docs/cli.md, from the
## cobra tree) and the dispatch transitions (docs/architecture.md, from engine.Transitions()).
## Their tests fail in `make test` when a committed page is stale.
docs:
	SWITCHBOARD_WRITE_DOCS=1 $(GO) test -count=1 -run '^TestArchitectureDocLifecycle$$' ./engine
	SWITCHBOARD_WRITE_DOCS=1 $(GO) test -count=1 -run '^TestCLIDocListsEveryCommand$$' ./cmd/switchboard

## bench: the standard scenarios of `switchboard bench` (docs/benchmarks.md) and the Go
## benchmarks of the hot paths, written to BENCHMARKS.md (each scenario's table, as the command
## prints it). Scenario (a) runs twice: from the bench's own callers and from wrk, a load
## generator in another process (installed here from Debian's packages when missing); then the
## delivery scenarios: a burst whose gateway posts each receipt a second after the send, and a
## sustained load with events. With BENCH_DATABASE set to a PostgreSQL URL, (a) also runs on it
## with one and three instances. With BENCH_BEFORE set to another checkout with its binary built
## (bin/switchboard), each scenario runs there first and then here, in turn, so that the file
## holds a before and an after of every scenario measured in one session; BENCH_BEFORE_FLAGS are
## added to the before runs (say `--concurrency 8` for a build whose bench default was not its
## serve default).
BENCH_SCENARIOS = "--messages 50000 --callers 64" \
	"--messages 50000 --callers 64 --load wrk" \
	"--messages 600 --callers 32 --gateway-latency 200ms" \
	"--messages 3000 --callers 32 --channel mixed" \
	"--messages 20000 --callers 64 --load wrk --receipt-delay 1s" \
	"--rate 1500 --duration 60s --webhooks"
BENCH_DATABASE ?=
BENCH_PG_SCENARIOS = "--messages 20000 --callers 64 --database $(BENCH_DATABASE)" \
	"--messages 30000 --callers 64 --database $(BENCH_DATABASE) --load wrk" \
	"--messages 20000 --callers 64 --database $(BENCH_DATABASE) --instances 3"
BENCH_BEFORE ?=
BENCH_BEFORE_FLAGS ?=
# Read before the recipe rewrites BENCHMARKS.md, which would make the checkout look modified.
BENCH_BUILD = $(shell git describe --tags --always --dirty 2>/dev/null)
BENCH_BEFORE_BUILD = $(if $(BENCH_BEFORE),$(shell git -C $(BENCH_BEFORE) describe --tags --always --dirty 2>/dev/null))
bench-tools:
	@command -v wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk; }
bench: build bench-tools
	@{ echo "# Benchmarks"; echo; \
	  echo "Written by \`make bench\` on $$(date -u +%Y-%m-%d) ($$(nproc) cores, $$(go version | cut -d' ' -f3)), build $(BENCH_BUILD)$(if $(BENCH_BEFORE), against $(BENCH_BEFORE_BUILD) run before it in turn$(if $(BENCH_BEFORE_FLAGS), with $(BENCH_BEFORE_FLAGS)),)."; \
	  echo; echo "The machine's speed at the start: $$($(GO) test ./scripting -run '^$$' -bench BenchmarkGojaCallBaseline -count 1 2>&1 | grep -o '[0-9.]* ns/op') for BenchmarkGojaCallBaseline (127 ns/op on a quiet day)."; \
	  one() { echo; echo "## \`switchboard bench $$title\`$$1"; echo; echo '```'; echo "uptime: $$(uptime)"; \
	    (cd "$$2" && "$$3" bench $$args $$4 2>&1) || echo "(exit status $$?)"; echo '```'; }; \
	  for args in $(BENCH_SCENARIOS) $(if $(BENCH_DATABASE),$(BENCH_PG_SCENARIOS)); do \
	    title=$$(echo $$args | sed 's|--database [^ ]*|--database URL|'); after=; \
	    if [ -n "$(BENCH_BEFORE)" ]; then \
	      one ", before ($(BENCH_BEFORE_BUILD))" "$(BENCH_BEFORE)" ./bin/switchboard "$(BENCH_BEFORE_FLAGS)"; after=", after"; \
	    fi; \
	    one "$$after" . ./$(BIN) ""; \
	  done; \
	  echo; echo "## Go benchmarks"; echo; echo '```'; \
	  $(GO) test -run '^$$' -bench . -benchmem -benchtime 2000x ./... 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)'; \
	  echo '```'; } | tee BENCHMARKS.md

## fuzz: every fuzz test of the repository, each for FUZZTIME (go test -fuzz runs one at a time).
## A failing input is kept under the package's testdata/fuzz/, where `make test` runs it again.
## Go before 1.27 may end a run at its deadline with a bare "context deadline exceeded" and no
## input (go.dev/issue/75804): such a run is reported and passed over; any other failure fails.
FUZZTIME ?= 30s
fuzz:
	@set -e; log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for f in $$(git grep -l '^func Fuzz' -- '*_test.go'); do \
	  d=$$(dirname $$f); \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
	    echo "== ./$$d $$t"; \
	    before=$$(ls $$d/testdata/fuzz/$$t 2>/dev/null | wc -l); \
	    if $(GO) test ./$$d -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) >$$log 2>&1; then tail -1 $$log; continue; fi; \
	    after=$$(ls $$d/testdata/fuzz/$$t 2>/dev/null | wc -l); \
	    if [ "$$after" = "$$before" ] && grep -q '^    context deadline exceeded$$' $$log && ! grep -q 'Failing input' $$log; then \
	      echo "   stopped at the deadline with no failing input (go.dev/issue/75804): passed over"; continue; \
	    fi; \
	    cat $$log; exit 1; \
	  done; \
	done

clean:
	rm -rf bin
