# Plume. `make dev` runs the whole API locally; `make test` runs every test. SAM builds each
# function through its build-<LogicalId> target (BuildMethod: makefile) with ARTIFACTS_DIR set.

GO ?= go
# Lambda binaries: provided.al2023 on arm64, static, RPC-free.
LAMBDA_BUILD = CGO_ENABLED=0 GOOS=linux GOARCH=$(or $(GOARCH_LAMBDA),arm64) $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w'
# Every function of template.yaml, by logical id.
FUNCTIONS = PromptsFunction TracingIngestFunction TracingQueryFunction SettingsFunction OTLPFunction JudgesFunction FeedbackFunction SignalsFunction EvaluatorFunction OptimizerFunction DatasetsFunction OptimizerWorkerFunction RollupFunction MCPFunction GatewayFunction DashboardFunction WebhooksFunction EventsFunction WebhookDeliveryFunction MonitorsFunction MonitorFunction

.PHONY: dev test build bench load scale fuzz lint clean cli $(addprefix build-,$(FUNCTIONS))

dev:
	scripts/dev.sh

test:
	scripts/test.sh

lint:
	cfn-lint template.yaml
	$(GO) vet ./...

# build: every bootstrap into bin/<LogicalId>/bootstrap.
build:
	@for f in $(FUNCTIONS); do $(MAKE) --no-print-directory build-$$f ARTIFACTS_DIR=$(CURDIR)/bin/$$f || exit 1; done

build-PromptsFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/prompts/lambda

build-TracingIngestFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/tracing/ingest

build-TracingQueryFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/tracing/query

build-OTLPFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/otlp/lambda

build-SettingsFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/settings/lambda

build-JudgesFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/judges/lambda

build-FeedbackFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/feedback/lambda

build-SignalsFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/signals/lambda

build-DatasetsFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/datasets/lambda

build-EvaluatorFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/evaluator/lambda

build-OptimizerFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/optimizer/lambda

build-OptimizerWorkerFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/optimizer/worker

build-RollupFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/rollups/lambda

build-MCPFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/mcpserver/lambda

build-GatewayFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/gateway/lambda

build-DashboardFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/dashboard/lambda

build-WebhooksFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/webhooks/lambda

build-EventsFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/webhooks/events

build-WebhookDeliveryFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/webhooks/delivery

build-MonitorsFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/monitors/lambda

build-MonitorFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/monitors/evaluate

# cli: the plume command for this machine, into bin/plume.
cli:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o bin/plume ./cmd/plume

# bench: the hot-path benchmarks, six runs each, ready for benchstat.
bench:
	scripts/bench.sh

# load: load figures and CPU profiles of plume-local against DynamoDB Local (scripts/load.sh).
load:
	scripts/load.sh

# scale: what every read costs at two project sizes ten times apart (scripts/scale.sh,
# docs/scale.md); not part of make test. make scale SCALE_SPANS=2000 runs in a few minutes.
scale:
	scripts/scale.sh

# fuzz: every fuzz target for FUZZTIME each (scripts/fuzz.sh; make test runs their seeds only).
fuzz:
	scripts/fuzz.sh

clean:
	rm -rf bin .aws-sam

# The dashboard's compiled pages (functions/dashboard/pages_gen.go), after editing a template.
.PHONY: dashboard-pages
dashboard-pages:
	$(GO) generate ./functions/dashboard

# The MCP tools' schemas (functions/mcpserver/schemas_gen.go), after changing a tool's input or output type.
.PHONY: mcp-schemas
mcp-schemas:
	$(GO) generate ./functions/mcpserver
