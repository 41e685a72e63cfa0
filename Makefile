# Pregão: the two commands a fresh machine with Go needs are `make run` and `make test`.
GO       ?= go
BIN      := bin/pregao
CACHE    := .cache
SEED     ?= 1
SCALE    ?= 1
# The address make run serves on: ADDR=HOST:PORT, or PREGAO_ADDR from the
# environment (serve's own variable), else 127.0.0.1:8080.
ADDR     ?= $(or $(PREGAO_ADDR),127.0.0.1:8080)
PREFIX   ?= /v2
DEMO_DIR := $(CACHE)/demo-s$(SEED)-x$(SCALE)
DEMO_SNAP := $(DEMO_DIR)/demo.snap
KEYS     := $(CACHE)/keys.json
DEMO_KEY := $(CACHE)/demo.key
REAL_DIR := $(CACHE)/real
FUZZTIME ?= 20s
# Cap the minimization of a new interesting input, so that the fuzz time
# goes to fuzzing (Go's default of 60s can take a target's whole budget).
FUZZMINTIME ?= 5s
# The version `pregao version` and /docs report, from the tree, not the
# tags (not every copy of the repository has them): the release that
# cmd/pregao/release.go names (make release sets it), then, past the
# commit whose CHANGELOG.md gained that release's section (the commit
# make release makes), -N-gCOMMIT (N commits since), and -dirty for
# uncommitted changes, as git describe writes it: v0.1.0, v0.1.0-98-
# g4f16615-dirty. Without that commit in the history (a shallow clone),
# the release with the commit as build metadata (v0.1.0+4f16615);
# outside a git checkout, v0.1.0+devel.
RELEASE_FILE := cmd/pregao/release.go
TREE_RELEASE := $(shell sed -n 's/^const release = "\(v[^"]*\)"$$/\1/p' $(RELEASE_FILE))
ifeq ($(origin VERSION),undefined)
VERSION := $(shell r=$(TREE_RELEASE); h=$$(git rev-parse --short HEAD 2>/dev/null); \
	if [ -z "$$h" ]; then echo "$$r+devel"; exit 0; fi; \
	d=$$(git diff --quiet HEAD -- 2>/dev/null || echo dirty); \
	c=$$(git log -1 --format=%H -S"## [$$(echo $$r | cut -c2-)] - " -- CHANGELOG.md 2>/dev/null); \
	n=$$([ -n "$$c" ] && git rev-list --count "$$c..HEAD" 2>/dev/null); \
	if [ -z "$$n" ]; then echo "$$r+$$h$${d:+.$$d}"; \
	elif [ "$$n" = 0 ]; then echo "$$r$${d:+-$$d}"; \
	else echo "$$r-$$n-g$$h$${d:+-$$d}"; fi)
endif
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS  := -X main.version=$(VERSION) -X main.revision=$(REVISION)

.PHONY: build demo run run-real test files-test files-polars-test test-browser soak official-proof replica-test replay-test replay-data live-replica-test live-bench bench fuzz lint tidy clean dist docker docker-demo k8s-schemas client-test vulncheck run-banner release release-check release-bump version docker-pin

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/pregao
	@echo "$(BIN): $$($(BIN) version -short)"

# The version make build stamps (VERSION above).
version:
	@echo $(VERSION)

# Static release binaries (no cgo, paths trimmed, symbols stripped, version
# stamped) for each of DIST_PLATFORMS, and their SHA-256 sums, in dist/
# (git-ignored). Check a download with: cd dist && sha256sum -c SHA256SUMS.
DIST_PLATFORMS ?= linux/amd64 linux/arm64
DIST_VERSION   := $(or $(VERSION),devel)
SHA256SUM      := $(shell command -v sha256sum >/dev/null 2>&1 && echo sha256sum || echo shasum -a 256)
dist:
	@rm -rf dist; mkdir -p dist
	@for p in $(DIST_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; out=dist/pregao-$(DIST_VERSION)-$$os-$$arch; \
		echo "$$out"; \
		GOTOOLCHAIN=$(RELEASE_GO) CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $$out ./cmd/pregao || exit 1; \
	done
	cd dist && $(SHA256SUM) pregao-* > SHA256SUMS
	@cat dist/SHA256SUMS

# A release: make release RELEASE=vX.Y.Z on a clean tree (release-bump):
# CHANGELOG.md's Unreleased section becomes ## [X.Y.Z] - TODAY under a
# new, empty Unreleased (the links at its end follow) and
# cmd/pregao/release.go names vX.Y.Z, both in one commit, "release:
# vX.Y.Z", tagged vX.Y.Z; then the binaries of that commit: dist's
# (built by RELEASE_GO), a CycloneDX SBOM of each
# (pregao-VERSION-OS-ARCH.cdx.json, the modules and Go version its build
# info records, by cyclonedx-gomod at a pinned release from the module
# proxy) and SHA256SUMS of them all. Refused: a dirty tree, a RELEASE
# that is not vX.Y.Z or not past the tree's release, an empty Unreleased
# section. make release without RELEASE builds the binaries of a release
# commit again (a release checked out); release-check refuses a version
# that is not a clean release or one CHANGELOG.md has no section for.
CYCLONEDX ?= github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
release-check:
	@case "$(VERSION)" in \
		v[0-9]*.[0-9]*.[0-9]*-*|*+*|*-dirty|"") echo "release: version '$(VERSION)' is not a clean release (make release RELEASE=vX.Y.Z makes one)"; exit 1;; \
		v[0-9]*.[0-9]*.[0-9]*) ;; \
		*) echo "release: version '$(VERSION)' is not vX.Y.Z"; exit 1;; \
	esac
	@v="$(VERSION)"; grep -q "^## \[$${v#v}\] - " CHANGELOG.md || { echo "release: CHANGELOG.md has no section ## [$${v#v}] - DATE"; exit 1; }

release-bump:
	@v="$(RELEASE)"; n="$${v#v}"; o="$(TREE_RELEASE)"; \
	case "$$v" in v[0-9]*.[0-9]*.[0-9]*) ;; *) echo "release: RELEASE=$$v is not vX.Y.Z"; exit 1;; esac; \
	case "$$n" in *[!0-9.]*|*..*|.*|*.) echo "release: RELEASE=$$v is not vX.Y.Z"; exit 1;; esac; \
	if [ -n "$$(git status --porcelain)" ]; then echo "release: the tree has uncommitted changes"; exit 1; fi; \
	if [ "$$v" = "$$o" ] || [ "$$(printf '%s\n%s\n' "$$o" "$$v" | sort -V | tail -1)" != "$$v" ]; then echo "release: $$v is not after the tree's release, $$o"; exit 1; fi; \
	if grep -q "^## \[$$n\]" CHANGELOG.md; then echo "release: CHANGELOG.md has a section ## [$$n] already"; exit 1; fi; \
	awk '/^## \[Unreleased\]/ { u = 1; next } u && /^## / { exit } u && NF { found = 1 } END { exit !found }' CHANGELOG.md \
		|| { echo "release: CHANGELOG.md's Unreleased section is empty"; exit 1; }; \
	awk -v v="$$v" -v n="$$n" -v o="$$o" -v d="$$(date -u +%Y-%m-%d)" ' \
		$$0 == "## [Unreleased]" { print; print ""; print "## [" n "] - " d; next } \
		index($$0, "[Unreleased]: ") == 1 && index($$0, "/compare/" o "...HEAD") { \
			base = substr($$0, 15, index($$0, "/compare/") - 15); \
			print "[Unreleased]: " base "/compare/" v "...HEAD"; print "[" n "]: " base "/releases/tag/" v; next } \
		{ print }' CHANGELOG.md > CHANGELOG.md.tmp && mv CHANGELOG.md.tmp CHANGELOG.md; \
	sed 's/^const release = ".*"$$/const release = "'"$$v"'"/' $(RELEASE_FILE) > $(RELEASE_FILE).tmp && mv $(RELEASE_FILE).tmp $(RELEASE_FILE); \
	git commit -q -m "release: $$v" -m "CHANGELOG.md's Unreleased section is $$n's; $(RELEASE_FILE) names it." CHANGELOG.md $(RELEASE_FILE) \
		&& git tag -a "$$v" -m "Pregão $$n" && echo "release: committed and tagged $$v"

release:
ifneq ($(RELEASE),)
	@$(MAKE) --no-print-directory release-bump RELEASE=$(RELEASE)
	@$(MAKE) --no-print-directory release RELEASE=
else
	@$(MAKE) --no-print-directory release-check
	$(MAKE) --no-print-directory dist
	@for f in dist/pregao-$(VERSION)-*; do \
		case "$$f" in *.cdx.json) continue;; esac; \
		echo "$$f.cdx.json"; \
		$(GO) run $(CYCLONEDX) bin -json -output "$$f.cdx.json" -version $(VERSION) "$$f" || exit 1; \
	done
	cd dist && $(SHA256SUM) pregao-* > SHA256SUMS
	@cat dist/SHA256SUMS
endif

# Container images (needs a Docker engine): the server, and the server with
# the demo snapshot and a demo key.
CREATED := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
docker:
	docker build --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) --build-arg CREATED=$(CREATED) -t pregao:$(subst +,-,$(DIST_VERSION)) .
docker-demo:
	docker build --target demo --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) --build-arg CREATED=$(CREATED) --build-arg SEED=$(SEED) --build-arg SCALE=$(SCALE) -t pregao:demo .

# Pin the Dockerfile's base images by digest: resolve the current digest
# of each tag (needs docker buildx and the registries) and write it into
# the Dockerfile's GO_IMAGE_DIGEST and RUNTIME_IMAGE_DIGEST; commit the
# change. Run it again to move to newer images.
docker-pin:
	@for pair in "GO_IMAGE_DIGEST golang:$$(sed -n 's/^ARG GO_VERSION=//p' Dockerfile)-bookworm" "RUNTIME_IMAGE_DIGEST gcr.io/distroless/static-debian12:nonroot"; do \
		set -- $$pair; \
		d=$$(docker buildx imagetools inspect "$$2" | sed -n 's/^Digest: *//p' | head -1); \
		case "$$d" in sha256:*) ;; *) echo "docker-pin: no digest for $$2"; exit 1;; esac; \
		sed -i "s|^ARG $$1=.*|ARG $$1=\"@$$d\"|" Dockerfile; \
		echo "$$1=@$$d ($$2)"; \
	done

# Generate the demo snapshot once (cached in .cache/, git-ignored), straight
# from the generator (generate --snapshot: no bundle written and read back),
# in generate's default format (6: about 405 MB at scale 1). A cached
# snapshot this binary cannot read, or of another format (a format 5 demo
# cached before 6 became the default), is generated again. Its summary
# goes to $(DEMO_DIR)/generate.log (V=1: here).
demo: build
	@if ! $(BIN) inspect --json $(DEMO_SNAP) 2>/dev/null | grep -q '"format_version": 6,'; then \
		set -e; rm -rf $(DEMO_DIR); mkdir -p $(DEMO_DIR); \
		echo "$(BIN) generate --seed $(SEED) --scale $(SCALE) --snapshot $(DEMO_SNAP)"; \
		$(BIN) generate --seed $(SEED) --scale $(SCALE) --snapshot $(DEMO_SNAP) $(if $(V),,> $(DEMO_DIR)/generate.log); \
	fi

# A demo API key: the keys file keeps only its SHA-256 digest; the key itself
# is kept in .cache/demo.key so that `make run` can print it every time.
$(DEMO_KEY): | build
	@mkdir -p $(CACHE)
	@$(BIN) keys add --file $(KEYS) --name demo --plan delayed > $(DEMO_KEY)

# Serve the demo on ADDR; once it answers, print the key, the reference
# page and commands to paste (make run-banner), and nothing after them:
# the server's log goes to $(SERVE_LOG) (V=1: here). Ctrl-C stops the
# server. Until serve has its listener (its "serving" line), its output
# goes to $(SERVE_LOG).new: when the address is taken serve stops at
# once, and so does make run, with serve's error, leaving $(SERVE_LOG)
# (another make run's) alone; /readyz is asked only of a server that is
# this one.
SERVE_LOG := $(CACHE)/serve.log
run: demo $(DEMO_KEY)
	@rm -f $(SERVE_LOG).new $(SERVE_LOG).out; \
	$(BIN) serve --snapshot $(DEMO_SNAP) --keys $(KEYS) --addr $(ADDR) --prefix $(PREFIX) --clock snapshot > $(SERVE_LOG).out $(if $(V),,2> $(SERVE_LOG).new) & pid=$$!; \
	trap 'kill -TERM $$pid 2>/dev/null; wait $$pid; rm -f $(SERVE_LOG).out; exit 0' INT TERM; \
	while kill -0 $$pid 2>/dev/null && ! grep -qs serving $(SERVE_LOG).out; do sleep 0.1; done; \
	if ! grep -qs serving $(SERVE_LOG).out; then \
		wait $$pid; $(if $(V),,cat $(SERVE_LOG).new >&2; rm -f $(SERVE_LOG).new;) rm -f $(SERVE_LOG).out; \
		echo "make run: pregao serve could not start on $(ADDR) (make run ADDR=HOST:PORT serves elsewhere)" >&2; exit 1; \
	fi; \
	rm -f $(SERVE_LOG).out; $(if $(V),,mv -f $(SERVE_LOG).new $(SERVE_LOG);) \
	if ! $(BIN) healthcheck --quiet --wait 300s --url http://$(ADDR)/readyz || ! kill -0 $$pid 2>/dev/null; then \
		kill -TERM $$pid 2>/dev/null; wait $$pid; $(if $(V),,tail -20 $(SERVE_LOG);) exit 1; \
	fi; \
	$(RUN_BANNER); \
	wait $$pid

# Through a variable: a recipe line naming $(MAKE) directly runs even
# under make -n, and this one would start the server.
RUN_BANNER = $(MAKE) -s --no-print-directory run-banner

# What make run prints once the server answers. Every command runs as
# pasted in bash and zsh (TestRunPrintedCommands runs them).
run-banner:
	@key=$$(cat $(DEMO_KEY)); \
	echo; \
	echo "Serving the demo (seed $(SEED), scale $(SCALE)) on http://$(ADDR); Ctrl-C stops it."; \
	echo "Its log: $(SERVE_LOG). More demo tickers to try: README.md."; \
	echo; \
	echo "API key (plan delayed): $$key"; \
	echo "API reference, with Try it out: http://$(ADDR)/docs"; \
	echo; \
	echo "Try, in bash or zsh:"; \
	echo; \
	echo "KEY=$$key"; \
	echo "curl -s -H \"Authorization: Bearer \$$KEY\" 'http://$(ADDR)$(PREFIX)/indexes/IBOV/highs?limit=5'"; \
	echo "curl -s -H \"Authorization: Bearer \$$KEY\" 'http://$(ADDR)$(PREFIX)/indexes/IBOV'"; \
	echo "curl -s -H \"Authorization: Bearer \$$KEY\" 'http://$(ADDR)$(PREFIX)/companies/PAME3/corporate-actions'"; \
	echo "curl -s -H \"Authorization: Bearer \$$KEY\" -d '{\"tickers\":[\"LITA3\",\"LITA11\",\"NORG33\"],\"type\":\"current\"}' 'http://$(ADDR)$(PREFIX)/quotes'"; \
	echo "curl -s -H \"Authorization: Bearer \$$KEY\" 'http://$(ADDR)$(PREFIX)/quotes/CAJT3?type=historical&start_date=2025-02-10&end_date=2025-02-17&adjusted=true'"

# Build a snapshot from the real official sample files in testdata/real and serve it.
run-real: build $(DEMO_KEY)
	@mkdir -p $(REAL_DIR)
	$(BIN) import --real-testdata testdata/real --out $(REAL_DIR)/bundle
	$(BIN) build --from $(REAL_DIR)/bundle --out $(REAL_DIR)/real.snap
	@echo
	@echo "API key (plan delayed): $$(cat $(DEMO_KEY))"
	@echo "Try (the sample's quotes end on 2022-02-04), in bash or zsh:"
	@echo
	@echo "KEY=$$(cat $(DEMO_KEY))"
	@echo "curl -s -H \"Authorization: Bearer \$$KEY\" 'http://$(ADDR)$(PREFIX)/quotes/PETR4?type=current'"
	@echo "curl -s -H \"Authorization: Bearer \$$KEY\" 'http://$(ADDR)$(PREFIX)/indexes/IBOV/highs?limit=5'"
	@echo "curl -s -H \"Authorization: Bearer \$$KEY\" 'http://$(ADDR)$(PREFIX)/indexes/IBOV'"
	@echo "curl -s -H \"Authorization: Bearer \$$KEY\" 'http://$(ADDR)$(PREFIX)/quotes/SELIC,IPCA?type=current'"
	@echo
	$(BIN) serve --snapshot $(REAL_DIR)/real.snap --keys $(KEYS) --addr $(ADDR) --prefix $(PREFIX) --clock snapshot

# Every test: vet, all tests with the race detector, and every fuzz target's
# seed corpus (go test runs seed corpora as ordinary tests).
# deploy/ is a module of its own (the Prometheus rule and PromQL parsers
# that check the dashboard and the alerting rules, and the Kubernetes
# manifests' validator, stay out of the server's go.mod).
# The timeout is per package and only turns a hang into a failure (each
# test's waits are bounded on their own): with -race on two shared cores
# loaded as another make test loads them, cmd/pregao took 11 to 13
# minutes.
# The second pass, without -race, runs NORACE_TESTS: allocation counts
# (the race detector drops pooled buffers), the pasted examples, and the
# tests that walk whole demos or send thousands of requests on one
# goroutine, 7 to 17 times slower under -race (which skips them or
# runs them on a sample: their raceEnabled).
NORACE_TESTS := Alloc|DocsExamples|StreamedAnswerMemory|DemoMoneyExact|Demo$$|HostileInputSweep|AsOfLookAhead|TotalReturnRecompute|RunNameRulesReal
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 30m ./...
	$(GO) test -count=1 -run '$(NORACE_TESTS)' ./...
	cd deploy && $(GO) vet ./... && $(GO) test -count=1 ./...

# DuckDB opens every flat file of the scale-1 demo (snapshot/flatfiles,
# pregao export) and reads the API's numbers: counts for every ticker,
# every value of a sample of tickers (quotes raw and adjusted, total
# return, cash actions, ratios), every index level and docs/files.md's
# SQL example. A module of its own (snapshot/flatfiles/duckdbtest):
# DuckDB's bindings (cgo and the engine's static library, from the Go
# module proxy) stay out of the server's go.mod and go test ./....
# .ci/run calls it after make test.
files-test:
	cd snapshot/flatfiles/duckdbtest && $(GO) vet ./... && CGO_ENABLED=1 $(GO) test -count=1 -v ./...

# Polars reads the scale-1 demo's flat files: docs/files.md's JavaScript
# example run as written (nodejs-polars, npm ci from the lockfile in
# snapshot/flatfiles/duckdbtest/testdata/polars), every value it reads
# checked against the API's answers. Needs Node.js 20 or later and npm
# (Debian 12 packages Node.js 18: nodejs-polars needs a newer one), so
# make test does not call it; .ci/run does when Node.js is 20 or later.
files-polars-test:
	cd snapshot/flatfiles/duckdbtest && PREGAO_POLARS_TEST=1 CGO_ENABLED=1 $(GO) test -count=1 -run TestPolarsExample -v ./...

# Clients generated from the served OpenAPI document, compiled and run
# against the scale-1 demo: a Go client by a pinned oapi-codegen
# (fetched through the module proxy; every operation called, every
# answer decoded, no float32 field), and a TypeScript client by
# openapi-typescript and openapi-fetch, pinned with typescript in
# cmd/pregao/testdata/tsclient's lockfile (npm ci; Node.js and npm from
# the OS packages: apt-get install nodejs npm), compiled with tsc
# --strict: every operation called, typed calls without a cast, the
# event-stream reader. Outside make test (about 1.5 min once the modules
# and packages are cached); CI runs it.
client-test:
	PREGAO_CLIENT_TEST=1 $(GO) test -count=1 -run 'TestGeneratedClient' -v ./cmd/pregao

# The importers at real size, outside make test: the demo market of
# SCALE written as official files (generate --official), imported
# (update --no-fetch: COTAHIST, CVM, FII, B3), built, timed with
# /usr/bin/time -v (wall time, peak memory); then the field-by-field
# comparison with the demo snapshot (TestImportGivesTheDemoBack) at that
# scale. Figures go to $(CACHE)/official-s$(SCALE)/times.txt. The list of
# what the formats cannot carry is in docs/data-format.md. The comparison
# builds both snapshots up to scale 2 (2.6 GB of memory at scale 1); from
# scale 3 it compares the universes before the build (16.6 GB at
# scale 10, and 4 GB of disk).
OFFICIAL_DIR := $(CACHE)/official-s$(SCALE)
official-proof: build
	@rm -rf $(OFFICIAL_DIR); mkdir -p $(OFFICIAL_DIR)
	/usr/bin/time -v $(BIN) generate --seed 1 --scale $(SCALE) --official $(OFFICIAL_DIR)/files 2> $(OFFICIAL_DIR)/generate.time
	/usr/bin/time -v $(BIN) update --no-fetch --dir $(OFFICIAL_DIR)/files --bundle $(OFFICIAL_DIR)/bundle --out $(OFFICIAL_DIR)/official.snap > $(OFFICIAL_DIR)/update.log 2> $(OFFICIAL_DIR)/update.time
	/usr/bin/time -v $(BIN) import $$(ls -S $(OFFICIAL_DIR)/files/InstDados/SerHist/*.ZIP | head -1 | sed 's/^/--cotahist /') --out $(OFFICIAL_DIR)/cotahist-bundle > $(OFFICIAL_DIR)/cotahist.log 2> $(OFFICIAL_DIR)/cotahist.time
	@{ for f in generate update cotahist; do \
		echo "$$f: $$(grep -E 'Elapsed' $(OFFICIAL_DIR)/$$f.time | sed 's/.*: //') wall, $$(grep -E 'Maximum resident' $(OFFICIAL_DIR)/$$f.time | sed 's/.*: //') KiB peak"; \
	done; grep -E 'COTAHIST:|^wrote' $(OFFICIAL_DIR)/update.log $(OFFICIAL_DIR)/cotahist.log; } | tee $(OFFICIAL_DIR)/times.txt
	PREGAO_OFFICIAL_SCALE=$(SCALE) PREGAO_OFFICIAL_BUILD=$(if $(filter 1 2,$(SCALE)),1,0) $(GO) test -count=1 -timeout 3h -run TestImportGivesTheDemoBack -v ./snapshot/ingest/official

# Longer reliability runs, outside make test: an open-loop load of 1,000
# requests a second on the scale-1 demo snapshot while it is replaced three
# times (zero failed requests, p99 during reloads and peak memory against
# their targets). Needs the demo snapshot (make demo) and a quiet machine.
soak: demo
	PREGAO_SOAK_SNAPSHOT=$(abspath $(DEMO_SNAP)) $(GO) test -count=1 -timeout 10m -run 'TestSoak|TestShutdownUnderLoad|TestSlowloris|TestStalledBody|TestStreamed' -v ./cmd/pregao ./httpapi

# The live session's proof (TestReplayUnderLoad): the demo generated in
# full and with its last session held back; a server replays the session
# over the held-back snapshot under an open-loop load while its answers,
# at instants through the day, are compared with the full snapshot's;
# then the roll. REPLAY_SPEED and REPLAY_RATE set the replay's speed and
# the load (requests a second).
REPLAY_DIR   := $(CACHE)/replay-s$(SEED)-x$(SCALE)
REPLAY_SPEED ?= 300
REPLAY_RATE  ?= 500
replay-test: replay-data
	PREGAO_REPLAY_DIR=$(abspath $(REPLAY_DIR)) PREGAO_REPLAY_SPEED=$(REPLAY_SPEED) PREGAO_REPLAY_RATE=$(REPLAY_RATE) $(GO) test -count=1 -timeout 20m -run TestReplayUnderLoad -v ./cmd/pregao

# The demo generated in full and with its last session held back
# (replay-test's and live-replica-test's data, generated once in .cache/).
replay-data: build
	@if ! $(BIN) inspect $(REPLAY_DIR)/base.snap >/dev/null 2>&1 || ! $(BIN) inspect $(REPLAY_DIR)/full.snap >/dev/null 2>&1; then \
		set -e; rm -rf $(REPLAY_DIR); mkdir -p $(REPLAY_DIR); \
		$(BIN) generate --seed $(SEED) --scale $(SCALE) --out $(REPLAY_DIR)/full; \
		$(BIN) generate --seed $(SEED) --scale $(SCALE) --out $(REPLAY_DIR)/base --hold-back-session $(REPLAY_DIR)/session; \
		$(BIN) build --from $(REPLAY_DIR)/full --out $(REPLAY_DIR)/full.snap; \
		$(BIN) build --from $(REPLAY_DIR)/base --out $(REPLAY_DIR)/base.snap; \
	fi

# Many replicas, one live session (TestLiveReplicas, outside make test:
# about LIVE_SPEED-dependent minutes): 3 NATS JetStream nodes (a
# nats-server built from the module's own dependency into .cache/) and 3
# `pregao serve --live nats://…` replicas on loopback behind nginx
# (apt-get install nginx); `pregao feed` replays the held-back demo
# session through the stream at LIVE_SPEED under an open-loop load of
# LIVE_RATE requests a second, every batch published twice; mid-session
# one NATS node and one replica are killed (SIGKILL) and the replica
# restarted. It passes with 0 failed requests, the restarted replica
# ready within 10 s of the stream answering again (after NATS's election
# of another leader, when the killed node led it) at the head of the
# stream, and the 3 replicas answering 200 fixed requests
# byte-identically (bodies and ETags) and as the full demo snapshot does.
# The processes' logs stay in .cache/live-replicas/.
LIVE_SPEED ?= 600
LIVE_RATE  ?= 300
NATS_BIN   := $(CACHE)/nats-server
$(NATS_BIN): go.mod go.sum
	@mkdir -p $(CACHE)
	$(GO) build -o $(NATS_BIN) github.com/nats-io/nats-server/v2
live-replica-test: replay-data $(NATS_BIN)
	@rm -f $(CACHE)/live-replicas.txt
	PREGAO_REPLICA_BIN=$(abspath $(BIN)) PREGAO_NATS_BIN=$(abspath $(NATS_BIN)) PREGAO_REPLAY_DIR=$(abspath $(REPLAY_DIR)) PREGAO_LIVE_SPEED=$(LIVE_SPEED) PREGAO_LIVE_RATE=$(LIVE_RATE) PREGAO_LIVE_SUMMARY=$(abspath $(CACHE))/live-replicas.txt PREGAO_LIVE_WORK=$(abspath $(CACHE))/live-replicas $(GO) test -count=1 -timeout 30m -run TestLiveReplicas -v ./cmd/pregao
	@cat $(CACHE)/live-replicas.txt

# Two replicas loading their snapshot from a local object store behind an
# nginx load balancer (apt-get install nginx), under load while a new
# snapshot is published: zero failed requests while both switch.
replica-test: build demo
	PREGAO_REPLICA_BIN=$(abspath $(BIN)) PREGAO_SOAK_SNAPSHOT=$(abspath $(DEMO_SNAP)) $(GO) test -count=1 -timeout 10m -run TestReplicas -v ./cmd/pregao

# The docs page (/docs) in a real browser: headless Chromium (Debian:
# apt-get install chromium) opens it, checks every operation is listed,
# authorizes with a key and runs Try it out on the demo snapshot; it also
# checks the page asks no other host for anything. A page's EventSource
# refused for its key's streams reconnects by itself once one closes.
# Outside make test (it needs Chromium). SCREENSHOT=FILE.png keeps a
# picture of the page.
test-browser: demo
	PREGAO_BROWSER_SNAPSHOT=$(abspath $(DEMO_SNAP)) PREGAO_BROWSER_SCREENSHOT=$(SCREENSHOT) $(GO) test -tags browser -count=1 -run 'TestDocsInBrowser|TestEventSourceInBrowser' -v ./cmd/pregao

# The live session's figures (docs/api.md, "Benchmarks"): the demo of
# SCALE with its last session held back (generated and built once, in
# .cache/), replayed through the session log and Store.ApplyLive as serve
# does (TestLiveReplayScale: apply p50/p99, log append and fsync, RSS
# growth), then the benchmarks of a 2,000-ticker apply and of the session
# log's append (on the disk of .cache/).
LIVE_DIR := $(CACHE)/live-s$(SEED)-x$(SCALE)
live-bench: build
	@if ! $(BIN) inspect $(LIVE_DIR)/base.snap >/dev/null 2>&1; then \
		set -e; rm -rf $(LIVE_DIR); mkdir -p $(LIVE_DIR); \
		echo "$(BIN) generate --seed $(SEED) --scale $(SCALE) --out $(LIVE_DIR)/bundle --hold-back-session $(LIVE_DIR)/session"; \
		$(BIN) generate --seed $(SEED) --scale $(SCALE) --out $(LIVE_DIR)/bundle --hold-back-session $(LIVE_DIR)/session; \
		$(BIN) build --from $(LIVE_DIR)/bundle --out $(LIVE_DIR)/base.snap; \
	fi
	PREGAO_LIVE_SNAPSHOT=$(abspath $(LIVE_DIR)/base.snap) PREGAO_LIVE_RECORDING=$(abspath $(LIVE_DIR)/session) $(GO) test -count=1 -run TestLiveReplayScale -v ./cmd/pregao
	$(GO) test -run '^$$' -bench ApplyLive -benchtime 400x ./cmd/pregao
	PREGAO_BENCH_DIR=$(abspath $(LIVE_DIR)) $(GO) test -run '^$$' -bench 'LogAppend|AppendRecord' -benchtime 200x ./snapshot/ingest/live

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Run each fuzz target for FUZZTIME.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) $$pkg || exit 1; \
	  done; \
	done

# gofmt, go vet and staticcheck (its default checks) at a pinned release,
# fetched through the module proxy on first use: only Go is needed.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

# Known vulnerabilities in the code paths the module (and deploy/) reach:
# govulncheck at a pinned release, against the Go vulnerability database
# at a pinned commit (golang.org/x/vulndb's OSV files, indexed into
# $(CACHE)/vulndb), both from the module proxy, so it needs no other host.
# The standard library is checked as RELEASE_GO, the toolchain that
# `make dist` and the Dockerfile build with (fetched through the proxy).
GOVULNCHECK ?= golang.org/x/vuln/cmd/govulncheck@v1.9.0
VULNDB      ?= golang.org/x/vulndb@v0.0.0-20261105234957-e22db6528018
RELEASE_GO  ?= go1.26.10
VULNDB_DIR  := $(CACHE)/vulndb-$(lastword $(subst @, ,$(VULNDB)))

$(VULNDB_DIR):
	@mkdir -p $(CACHE)
	src=$$($(GO) mod download -json $(VULNDB) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p') \
	 && rm -rf $@.tmp && $(GO) run golang.org/x/vulndb/cmd/indexdb@$(lastword $(subst @, ,$(VULNDB))) -vulns $$src/data/osv -out $@.tmp \
	 && mv $@.tmp $@

vulncheck: $(VULNDB_DIR)
	GOTOOLCHAIN=$(RELEASE_GO) $(GO) run $(GOVULNCHECK) -db file://$(abspath $(VULNDB_DIR)) ./...
	cd deploy && GOTOOLCHAIN=$(RELEASE_GO) $(GO) run $(GOVULNCHECK) -db file://$(abspath $(VULNDB_DIR)) ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	cd deploy && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...

# The strict JSON schemas the Kubernetes manifests are validated against
# (deploy/kubernetes/schemas), from the OpenAPI document of a Kubernetes
# release taken from the Go module proxy.
K8S_VERSION ?= v1.34.2
K8S_KINDS = Deployment:apps/v1 Service:v1 PodDisruptionBudget:policy/v1 HorizontalPodAutoscaler:autoscaling/v2 ServiceAccount:v1 Secret:v1
k8s-schemas:
	cd deploy && spec=$$($(GO) mod download -json k8s.io/kubernetes@$(K8S_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p')/api/openapi-spec/swagger.json \
	 && $(GO) run ./kubernetes/schemas/gen -spec "$$spec" -release $(K8S_VERSION) -out kubernetes/schemas $(K8S_KINDS)

tidy:
	$(GO) mod tidy
	cd deploy && $(GO) mod tidy
	cd snapshot/flatfiles/duckdbtest && $(GO) mod tidy
	git diff --exit-code go.mod go.sum deploy/go.mod deploy/go.sum snapshot/flatfiles/duckdbtest/go.mod snapshot/flatfiles/duckdbtest/go.sum

clean:
	rm -rf bin dist $(CACHE)
