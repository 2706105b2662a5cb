# assay — the two commands a newcomer needs are `make demo` and `make test`.
GO        ?= go
BIN       := bin
# every built-in plugin is a main package cmd/assay-scorer-<id>
PLUGINS   := $(patsubst cmd/assay-scorer-%/,%,$(wildcard cmd/assay-scorer-*/))
# Every binary is built static (CGO_ENABLED=0: no dynamic loader or libc
# to start), without DWARF (-ldflags=-w: panics, pprof and perf keep their
# function names) and without gRPC's request tracing (-tags grpcnotrace: no
# golang.org/x/net/trace and its HTML templates). The host hashes a
# plugin's whole file at each launch, so a smaller file starts sooner
# (docs/performance.md, "Thirteenth round"). `make build
# BUILDFLAGS=-tags=grpcnotrace` keeps DWARF for a debugger; `make build
# CGO_ENABLED=1` links dynamically. The tests and benchmarks build the same
# way (internal/buildflags; TestBuiltLean).
BUILDFLAGS  := -tags grpcnotrace -ldflags=-w
CGO_ENABLED ?= 0
GOBUILD     := CGO_ENABLED=$(CGO_ENABLED) $(GO) build -buildvcs=auto -trimpath $(BUILDFLAGS)
FUZZTIME  ?= 45s
# the fuzzer minimizes every new interesting input with at most this many
# calls (or for this long, e.g. 2s), so minimizing cannot eat FUZZTIME (DEVELOPERS.md)
FUZZMINIMIZETIME ?= 100x

.PHONY: all build plugins test fuzz fuzz-list bench demo proto proto-check lint clean

all: build

## build: bin/assay, every built-in plugin in bin/plugins/, and the plugin manifest
build:
	@mkdir -p $(BIN)/plugins
	$(GOBUILD) -o $(BIN)/assay ./cmd/assay
	@for p in $(PLUGINS); do \
		echo "$(GOBUILD) -o $(BIN)/plugins/assay-scorer-$$p ./cmd/assay-scorer-$$p"; \
		$(GOBUILD) -o $(BIN)/plugins/assay-scorer-$$p ./cmd/assay-scorer-$$p || exit 1; \
	done
	$(BIN)/assay --plugin-dir $(BIN)/plugins plugins register $(addprefix $(BIN)/plugins/assay-scorer-,$(PLUGINS))

## test: vet, then every test with the race detector, in the host module and
## in the SDK module (sdk/, its own go.mod) (what .ci/run runs)
test:
	$(GO) vet ./...
	cd sdk && $(GO) vet ./...
	$(GO) test -race -timeout 15m ./...
	cd sdk && $(GO) test -race -timeout 15m ./...

## fuzz: run every Fuzz* function in the tree for FUZZTIME each (the list is
## derived by fuzz-list, never written by hand; e2e checks it finds them all),
## minimizing a new input for at most FUZZMINIMIZETIME
fuzz:
	@set -e; for t in $$($(MAKE) -s --no-print-directory fuzz-list); do \
		pkg=$${t%:*}; fn=$${t#*:}; dir=.; \
		case $$pkg in ./sdk/*) dir=sdk; pkg=./$${pkg#./sdk/};; esac; \
		echo "(cd $$dir && $(GO) test $$pkg -run '^$$' -fuzz '^$$fn\$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME))"; \
		(cd $$dir && $(GO) test $$pkg -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME)); \
	done

## fuzz-list: every fuzz target as ./pkg/dir:FuzzName, one a line
fuzz-list:
	@git ls-files --cached --others --exclude-standard -- '*_test.go' | \
		xargs grep -H '^func Fuzz[A-Za-z0-9_]*(' | \
		sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#./\1:\2#; s#^[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#.:\1#' | LC_ALL=C sort

## bench: every benchmark with its reported metrics (the end-to-end verify runs once,
## 1,000,000 one-turn answers included; set ASSAY_TEST_POSTGRES_URL to include
## Postgres), into bin/bench.txt; it fails when a benchmark does (pipefail:
## the output goes through tee)
bench: SHELL := /bin/bash
bench: .SHELLFLAGS := -o pipefail -c
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -count 1 $$($(GO) list ./... | grep -v /e2e) | tee $(BIN)/bench.txt
	cd sdk && $(GO) test -run '^$$' -bench . -benchmem -count 1 ./... | tee -a ../$(BIN)/bench.txt
	ASSAY_BENCH_1M=1 $(GO) test -run '^$$' -bench . -benchtime 1x -count 1 -timeout 30m ./e2e | tee -a $(BIN)/bench.txt

## demo: build everything and verify the bundled example runs against SQLite
demo: build
	@rm -rf $(BIN)/demo && mkdir -p $(BIN)/demo
	$(BIN)/assay --plugin-dir $(BIN)/plugins --db $(BIN)/demo/assay.db pack validate packs/*.yaml
	$(BIN)/assay --plugin-dir $(BIN)/plugins --db $(BIN)/demo/assay.db verify --pack packs/example.yaml \
		--run examples/runs/candidate-a --run examples/runs/candidate-b --run examples/runs/candidate-c \
		--out $(BIN)/demo/out; code=$$?; \
		echo "verify exit code: $$code (1 = a candidate failed a gate, as candidate-b does)"; [ $$code -le 1 ]

## proto: regenerate the Go protocol code from proto/ (needs protoc, protoc-gen-go,
## protoc-gen-go-grpc; see DEVELOPERS.md). Where the code goes is PROTO_OUT.
PROTO_SRC  := proto/assay/scorer/v1
PROTO_OUT  := sdk/scorerpb
PROTOC_GEN_GO      := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
proto:
	protoc -I $(PROTO_SRC) \
		--go_out=$(PROTO_OUT) --go_opt=paths=source_relative \
		--go-grpc_out=$(PROTO_OUT) --go-grpc_opt=paths=source_relative \
		$(PROTO_SRC)/*.proto

## proto-check: regenerate with the pinned generators (installed into bin/tools)
## and fail when the committed code differs (what .ci/run runs before make test)
proto-check:
	@command -v protoc >/dev/null || { echo "proto-check: protoc not found (apt-get install protobuf-compiler)"; exit 1; }
	GOBIN=$(abspath $(BIN))/tools $(GO) install $(PROTOC_GEN_GO)
	GOBIN=$(abspath $(BIN))/tools $(GO) install $(PROTOC_GEN_GO_GRPC)
	PATH="$(abspath $(BIN))/tools:$$PATH" $(MAKE) --no-print-directory proto
	@git diff --exit-code -- $(PROTO_OUT) || { echo "proto-check: $(PROTO_OUT) is not what make proto generates from $(PROTO_SRC); run make proto and commit"; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard -- $(PROTO_OUT)); \
		if [ -n "$$untracked" ]; then echo "proto-check: make proto made files that are not committed: $$untracked"; exit 1; fi

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
		if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd sdk && $(GO) vet ./...

clean:
	rm -rf $(BIN)
