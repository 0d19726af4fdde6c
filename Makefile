# powercontext — `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
SQLC := bin/sqlc
SQLC_VERSION := v1.31.1
GOLANGCI_LINT := bin/golangci-lint

# Local test databases (CI exports the same values). An engine whose
# server is unreachable is skipped on a laptop unless PC_TEST_REQUIRE_ENGINES names it (CI requires all three).
export PC_TEST_POSTGRES_DSN ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
export PC_TEST_MYSQL_DSN ?= root@tcp(127.0.0.1:3306)/test

TEST_FLAGS ?= -count=1 -timeout 25m

.PHONY: sql-vet sql-review sql-review-check migration-review migration-timings help run test check race verify lint lint generate generate-check migrate-hash fmt-check tidy-check vet build e2e load bench bench-portability fuzz clients-test contract-test image migrate-lint

help: ## list targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*?## "}{printf "  %-16s %s\n", $$1, $$2}'

run: ## run the service: single_node, role all, embedded SQLite under ./data, local provider, 127.0.0.1:8080
	$(GO) run ./cmd/powercontext server run

# The release build: static (CGO_ENABLED=0, the SQLite driver is pure Go), trimmed paths, stamped with VERSION,
# REVISION and BUILD_TIME (internal/buildinfo; `powercontext version` prints them). The Dockerfile runs this target
# and so does CI (clients-test depends on it), so the image is built the way CI builds.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
BUILD_TIME ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
BUILDINFO := github.com/powercontext/powercontext/internal/buildinfo
LDFLAGS := -s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).revision=$(REVISION) -X $(BUILDINFO).buildTime=$(BUILD_TIME)
IMAGE ?= powercontext:$(VERSION)

build: ## build bin/powercontext: static, stamped with VERSION/REVISION/BUILD_TIME (the Dockerfile runs this)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/powercontext ./cmd/powercontext

image: ## build the container image $(IMAGE) (needs docker or podman; the build inside is `make build`)
	$(or $(CONTAINER_TOOL),docker) build --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) \
	  --build-arg BUILD_TIME=$(BUILD_TIME) $(foreach d,GO_IMAGE_DIGEST RUNTIME_IMAGE_DIGEST,$(if $($(d)),--build-arg $(d)=$($(d)))) \
	  -t $(IMAGE) .

test: ## run every test (conformance suite on postgres, mysql and sqlite; engines without a server are skipped)
	$(GO) test $(TEST_FLAGS) ./...

check: generate-check sql-vet sql-review-check fmt-check tidy-check vet lint test race clients-test contract-test ## what CI runs: stale generated code, gofmt, go mod tidy, go vet, golangci-lint, tests, the race detector, client suites, the HTTP contract test

# The race detector over the packages that race goroutines against real databases, with -short (the long soaks
# and fleet rounds stay in `make test`/`make e2e`). It roughly doubles `make check` on a 2-core machine.
race: ## go test -race -short over coordinator, memory, sources, handlers and app
	$(GO) test -race -short $(TEST_FLAGS) ./coordinator/ ./memory/ ./sources/ ./handlers/ ./app/

# The ledger's state-machine proof run long (coordinator/ledgermodel_machine_test.go, docs/protocol.md#the-reference-model):
# VERIFY_CHECKS generated sequences of about VERIFY_STEPS operations each per engine, every step compared with the
# reference model. `make test` runs 25 short sequences per engine. The last lines are each engine's counts.
VERIFY_CHECKS ?= 800
VERIFY_STEPS ?= 40
verify: ## long state-machine run of the ledger against its reference model on every engine (VERIFY_CHECKS sequences each)
	set -o pipefail; $(GO) test ./coordinator -run '^TestLedgerModel$$' -count=1 -timeout 60m -v -rapid.checks=$(VERIFY_CHECKS) \
	  -rapid.steps=$(VERIFY_STEPS) | grep -E '^(---|===|PASS|FAIL|ok)|\[rapid\]|ledger model on|model expects|ledger returned|→'

$(SQLC):
	@mkdir -p bin
	cd tools && $(GO) build -o ../$(SQLC) github.com/sqlc-dev/sqlc/cmd/sqlc

$(GOLANGCI_LINT):
	@mkdir -p bin
	cd tools && $(GO) build -o ../$(GOLANGCI_LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

lint: $(GOLANGCI_LINT) ## golangci-lint (.golangci.yml: staticcheck, errcheck, unused, revive, gosec, depguard layering)
	$(GOLANGCI_LINT) run ./...

generate: $(SQLC) ## regenerate db/gen from sql/queries and sql/schema (sqlc $(SQLC_VERSION)), then the adapters' pass-throughs (db/*store/queries_gen.go)
	$(SQLC) generate
	go run ./internal/tools/adaptergen postgres mysql sqlite

generate-check: $(SQLC) ## fail when db/gen or an adapter's queries_gen.go is stale
	@$(SQLC) diff || { echo "generated code is stale: run 'make generate' and commit db/gen"; exit 1; }
	@go run ./internal/tools/adaptergen -check postgres mysql sqlite

# The DBA review kit (internal/sqlreview, docs/deployment.md#reviewing-sql): a scratch database per server
# (PC_TEST_POSTGRES_DSN, PC_TEST_MYSQL_DSN), migrated, seeded with 10^4 items over 10^3 lanes, 10^4 sources and
# memory rows and ANALYZEd; then `sqlc vet` with its URIs in PC_VET_POSTGRES_URI and PC_VET_MYSQL_URI (sqlc.yaml):
# every query prepares on both servers, and no PostgreSQL plan sequentially scans a big table (exceptions in sqlc.yaml).
sql-vet: $(SQLC) ## sqlc vet on seeded scratch databases: queries prepare (postgres, mysql), no seq scan of big tables (postgres)
	PC_SQLC="$(CURDIR)/$(SQLC)" PC_TEST_REQUIRE_ENGINES=postgres,mysql $(GO) test ./internal/sqlreview -run '^TestSQLCVet$$' -count=1

# The same seeded scratch databases on all three engines (SQLite in a temporary directory): every query of
# sql/queries/<engine> explained (PostgreSQL: the generic plan; MariaDB and SQLite: representative parameters); the
# plan rules fail a full scan of a big table or a filesort in a claim on MySQL and SQLite (exceptions in
# internal/sqlreview/review.go). sql-review writes docs/sql-review/<engine>.md; sql-review-check regenerates them
# into a temporary directory and fails when a query's plan shape (index or full scan, sort, temporary) differs.
sql-review: ## rewrite docs/sql-review/<engine>.md (every query with its comment, SQL and plan at the seeded size) and migrations.md
	PC_SQL_REVIEW=write PC_TEST_REQUIRE_ENGINES=postgres,mysql,sqlite $(GO) test ./internal/sqlreview -run '^(TestSQLReview|TestMigrationReview)$$' -count=1

sql-review-check: ## fail on a plan rule finding (mysql, sqlite), a plan shape differing from docs/sql-review, or a stale migrations.md
	PC_SQL_REVIEW=check PC_TEST_REQUIRE_ENGINES=postgres,mysql,sqlite $(GO) test ./internal/sqlreview -run '^(TestSQLReview|TestMigrationReview)$$' -count=1

# The migration review alone (no seeding): every statement of sql/migrations/<engine> classified by the rules of
# internal/sqlreview/migrations.go and re-run on scratch databases (MariaDB: explicit ALGORITHM/LOCK; PostgreSQL:
# pg_locks) into docs/sql-review/migrations.md. TestMigrationRules (no database, part of make test) refuses a
# blocking statement on a big table without an exception.
migration-review: ## rewrite docs/sql-review/migrations.md: each migration statement's lock, online or blocking, verified on the servers
	PC_SQL_REVIEW=write PC_TEST_REQUIRE_ENGINES=postgres,mysql,sqlite $(GO) test ./internal/sqlreview -run '^TestMigrationReview$$' -count=1

migration-timings: ## time the blocking migration statements (those with an exception) on databases seeded like sql-review
	PC_MIGRATION_TIMINGS=1 PC_TEST_REQUIRE_ENGINES=postgres,mysql,sqlite $(GO) test ./internal/sqlreview -run '^TestMigrationTimings$$' -count=1 -v

migrate-lint: ## atlas migrate lint over every engine's migrations, on fresh dev databases (needs the Atlas CLI)
	$(GO) test ./deploy -run 'TestAtlasMigrateLint' -count=1 -v

migrate-hash: ## rewrite sql/migrations/*/atlas.sum after adding a migration
	$(GO) run ./internal/tools/atlassum

# The distributed proof (e2e/): a real fleet (2 api, 2 scheduler, 3 worker processes) on MariaDB and PostgreSQL under
# chaos (SIGKILL, SIGSTOP, database partitions, zombie workers), database restarts (a private server killed and
# stopped) and skewed process clocks, checked with SQL. `make e2e E2E_LONG=1` runs the long variants and the
# broken-build round; E2E_BROKEN=1 adds the broken-build round to the short ones. `make test` runs the short
# variants too. The last lines of the output are the verdict of every round, with its history check (and the cause of a failure).
E2E_LONG ?=
E2E_BROKEN ?=
e2e: ## distributed proof on mariadb and postgres (short; E2E_LONG=1 for the long variants + broken build)
	E2E_LONG=$(E2E_LONG) E2E_BROKEN=$(E2E_BROKEN) $(GO) test ./e2e/ -run TestFleet -count=1 -v -timeout 60m

# The sustained load (e2e/sustained_test.go): an open-loop generator at a fixed arrival rate through 2 API replicas
# of a fleet on a private PostgreSQL and MariaDB, a steady run and one with a worker-fleet restart per engine; prints
# latency percentiles per route, answers by status, queue depth and database connections. LOAD_DURATION (3m),
# LOAD_RESTART_DURATION (2m), LOAD_RATE (40 per second) and LOAD_ENGINES (mysql,postgres) adjust it. A 20 s variant
# runs in `make test`.
load: ## sustained open-loop load on mariadb and postgres (about 12 minutes); prints the latency table
	LOAD=1 $(GO) test ./e2e/ -run TestLoad -count=1 -v -timeout 60m

# The Python and TypeScript clients' suites, each against a real server (bin/powercontext, single_node on an
# embedded SQLite database in a temporary directory), and the MCP Inspector's CLI (pinned in mcp/inspector/) driving
# every MCP tool of an in-process single_node server (mcp/inspector_test.go), the Agent Skills reference validator
# (skills-ref, pinned in skills/skillsref/) on generated skill packages (skills/skillsref_test.go), and the Agent
# Skills loader (openskills, pinned in skills/openskills/) installing and reading them (skills/openskills_test.go).
# A machine without python3 or node/npm skips the suite it cannot run unless PC_TEST_REQUIRE_CLIENTS=1 (CI sets it).
clients-test: build ## Python (unittest), TypeScript (node --test) and MCP Inspector CLI suites against a real server; skills-ref and openskills on generated skills
	@export POWERCONTEXT_BIN="$(CURDIR)/bin/powercontext"; \
	if command -v python3 >/dev/null; then \
	  (cd clients/python && python3 -m unittest discover -s tests -t . -v) || exit 1; \
	elif [ -n "$$PC_TEST_REQUIRE_CLIENTS" ]; then echo "clients-test: python3 is required"; exit 1; \
	else echo "clients-test: python3 not found; Python client suite skipped"; fi; \
	if command -v node >/dev/null && command -v npm >/dev/null; then \
	  (cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error && npm test) || exit 1; \
	  PC_TEST_MCP_INSPECTOR=1 $(GO) test ./mcp/ -run TestInspectorCLIDrivesEveryTool -count=1 -v || exit 1; \
	  PC_TEST_REQUIRE_CLIENTS=1 $(GO) test ./skills/ -run 'TestPackagesValidateWithSkillsRef|TestPackagesLoadWithOpenSkills' -count=1 -v || exit 1; \
	elif [ -n "$$PC_TEST_REQUIRE_CLIENTS" ]; then echo "clients-test: node and npm are required"; exit 1; \
	else echo "clients-test: node/npm not found; TypeScript client and MCP Inspector suites skipped"; fi

# The HTTP contract test (tools/contract/contract.mjs, docs/api.md#contract-test): the README quickstart and the
# documented error cases through Stoplight Prism's validating proxy (pinned in tools/contract/package-lock.json) in
# front of real servers (bin/powercontext, single_node on SQLite in a temporary directory); any departure from
# api/openapi.yaml fails. Then the same tester against a deliberately broken copy of the document must fail
# (--broken-spec). Skipped without node/npm unless PC_TEST_REQUIRE_CLIENTS=1 (CI sets it).
contract-test: build ## the README quickstart and documented errors through Prism's validating proxy against a real server
	@if command -v node >/dev/null && command -v npm >/dev/null; then \
	  cd tools/contract && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && \
	  POWERCONTEXT_BIN="$(CURDIR)/bin/powercontext" node contract.mjs && \
	  POWERCONTEXT_BIN="$(CURDIR)/bin/powercontext" node contract.mjs --broken-spec; \
	elif [ -n "$$PC_TEST_REQUIRE_CLIENTS" ]; then echo "contract-test: node and npm are required"; exit 1; \
	else echo "contract-test: node/npm not found; the contract test was skipped (PC_TEST_REQUIRE_CLIENTS=1 requires it)"; fi

fmt-check: ## fail when gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^db/gen/')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The budget is a count of inputs, not a duration: Go 1.26's fuzz coordinator can report its own -fuzztime
# deadline as a failure ("context deadline exceeded", no crasher) when a loaded worker answers late; a count has
# no deadline to race. Go 1.27 fixes the race (golang/go#75804).
fuzz: ## run the request-decoding fuzz target briefly (FUZZTIME, default 20000x inputs)
	$(GO) test ./handlers -run '^$$' -fuzz FuzzSourcesAndFlush -fuzztime $(or $(FUZZTIME),20000x)

# The benchmark suite (bench/, its own Go module so River stays out of go.mod): B1 throughput against River on the
# same PostgreSQL in the same run (one item per transaction, bulk enqueue, a wider W×C), B2 claim cost vs backlog, B3
# flush API latency, B4 round trips per item, B5 cross-process enqueue → claim latency. It prints a table, rewrites
# the generated section of BENCHMARKS.md (with a before/after table against bench/baseline.json); BENCH_FLAGS adds
# flags (go run ./cmd/pcbench -h), e.g. BENCH_FLAGS="-json /tmp/figures.json" writes every figure for tooling.
# The Graphile Worker peer (bench/graphile) is installed with npm first; without npm (or Node.js ≥ 22.18, which the
# lock file's `node` package provides) pcbench skips it with a line saying why (-require-graphile makes that an error).
BENCH_FLAGS ?=
bench: ## benchmark suite against River and Graphile Worker on postgres, mariadb and sqlite (< 15 min); rewrites BENCHMARKS.md
	-cd bench/graphile && npm ci --no-audit --no-fund --loglevel=error
	cd bench && $(GO) run ./cmd/pcbench -out ../BENCHMARKS.md $(BENCH_FLAGS)

# The portability section of BENCHMARKS.md (issue 31, its own markers there): export, import and `server copy`
# throughput (records/s, MB/s) of one scope of 10,000 and 100,000 Sources on postgres, mariadb and sqlite (a few
# minutes); -portability-sources in BENCH_FLAGS changes the sizes.
bench-portability: ## export/import/server copy throughput at 10k and 100k Sources on postgres, mariadb and sqlite; rewrites its section of BENCHMARKS.md
	cd bench && $(GO) run ./cmd/pcbench -only portability -out ../BENCHMARKS.md $(BENCH_FLAGS)

# The three modules: the service (.), the benchmark suite (bench/, keeps River out of the service's go.mod) and the
# pinned code generators (tools/).
MODULES := . bench tools

tidy-check: ## fail when go mod tidy would change go.mod or go.sum of any module (., bench, tools)
	@for m in $(MODULES); do (cd $$m && $(GO) mod tidy -diff) || { echo "$$m: go.mod/go.sum are not tidy: run 'go mod tidy' in $$m"; exit 1; }; done

vet: ## go vet the service and the benchmark suite
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
