# Pregão: the two commands a fresh machine with Go needs are `make run` and `make test`.
GO       ?= go
BIN      := bin/pregao
CACHE    := .cache
SEED     ?= 1
SCALE    ?= 1
ADDR     ?= 127.0.0.1:8080
PREFIX   ?= /v2
DEMO_DIR := $(CACHE)/demo-s$(SEED)-x$(SCALE)
DEMO_SNAP := $(DEMO_DIR)/demo.snap
KEYS     := $(CACHE)/keys.json
DEMO_KEY := $(CACHE)/demo.key
REAL_DIR := $(CACHE)/real
FUZZTIME ?= 20s
# The version `pregao version` reports: the nearest tag, commits since, the
# commit and -dirty for uncommitted changes. Empty outside a git checkout:
# the binary then reports its module version or "devel".
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS  := -X main.version=$(VERSION) -X main.revision=$(REVISION)

.PHONY: build demo run run-real test bench fuzz lint tidy clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/pregao
	@echo "$(BIN): $$($(BIN) version -short)"

# Generate and build the demo snapshot once (cached in .cache/, git-ignored).
# A cached snapshot this binary cannot read (an older snapshot format) is
# generated and built again.
demo: build
	@if ! $(BIN) inspect $(DEMO_SNAP) >/dev/null 2>&1; then \
		set -e; rm -rf $(DEMO_DIR); mkdir -p $(DEMO_DIR); \
		echo "$(BIN) generate --seed $(SEED) --scale $(SCALE) --out $(DEMO_DIR)/bundle"; \
		$(BIN) generate --seed $(SEED) --scale $(SCALE) --out $(DEMO_DIR)/bundle; \
		echo "$(BIN) build --from $(DEMO_DIR)/bundle --out $(DEMO_SNAP)"; \
		$(BIN) build --from $(DEMO_DIR)/bundle --out $(DEMO_SNAP); \
	fi

# A demo API key: the keys file keeps only its SHA-256 digest; the key itself
# is kept in .cache/demo.key so that `make run` can print it every time.
$(DEMO_KEY): | build
	@mkdir -p $(CACHE)
	$(BIN) keys add --file $(KEYS) --name demo --plan delayed > $(DEMO_KEY)

run: demo $(DEMO_KEY)
	@echo
	@echo "API key (plan delayed): $$(cat $(DEMO_KEY))"
	@echo "Try:"
	@echo "  curl -s -H 'Authorization: Bearer $$(cat $(DEMO_KEY))' http://$(ADDR)$(PREFIX)/indexes/IBOV/highs?limit=5"
	@echo
	$(BIN) serve --snapshot $(DEMO_SNAP) --keys $(KEYS) --addr $(ADDR) --prefix $(PREFIX) --clock snapshot

# Build a snapshot from the real official sample files in testdata/real and serve it.
run-real: build $(DEMO_KEY)
	@mkdir -p $(REAL_DIR)
	$(BIN) import --real-testdata testdata/real --out $(REAL_DIR)/bundle
	$(BIN) build --from $(REAL_DIR)/bundle --out $(REAL_DIR)/real.snap
	@echo
	@echo "API key (plan delayed): $$(cat $(DEMO_KEY))"
	@echo "Try (the sample's quotes end on 2022-02-04):"
	@echo "  curl -s -H 'Authorization: Bearer $$(cat $(DEMO_KEY))' http://$(ADDR)$(PREFIX)/quotes/PETR4?type=current"
	@echo "  curl -s -H 'Authorization: Bearer $$(cat $(DEMO_KEY))' http://$(ADDR)$(PREFIX)/indexes/IBOV/highs?limit=5"
	@echo
	$(BIN) serve --snapshot $(REAL_DIR)/real.snap --keys $(KEYS) --addr $(ADDR) --prefix $(PREFIX) --clock snapshot

# Every test: vet, all tests with the race detector, and every fuzz target's
# seed corpus (go test runs seed corpora as ordinary tests).
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Run each fuzz target for FUZZTIME.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

tidy:
	$(GO) mod tidy
	git diff --exit-code go.mod go.sum

clean:
	rm -rf bin $(CACHE)
