# syntax=docker/dockerfile:1
#
# Pregão container images (docs/operations.md, "Container image").
#
#   docker build -t pregao .                     the server (the default, last stage)
#   docker build --target demo -t pregao:demo .  the server with the demo snapshot and a demo key
#
# `make docker` and `make docker-demo` pass VERSION, REVISION and CREATED
# (the repository's .git is not sent to the builder, so the go command
# cannot record them itself). The server is configured by PREGAO_*
# environment variables, one per `pregao serve` flag. The build stage runs
# on the builder's platform and cross-compiles for the target's
# (docker buildx build --platform linux/amd64,linux/arm64 .).
#
# Base images: GO_IMAGE_DIGEST and RUNTIME_IMAGE_DIGEST pin them by digest
# ("@sha256:..."); `make docker-pin` resolves the current digests of the
# two tags and writes them here.

ARG GO_VERSION=1.26.10
ARG GO_IMAGE_DIGEST=""
ARG RUNTIME_IMAGE_DIGEST=""

# build: a static binary (no cgo, so no libc), paths trimmed, for the
# target platform, compiled on the builder's.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm${GO_IMAGE_DIGEST} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG REVISION=""
ARG TARGETOS=linux
ARG TARGETARCH
ENV CGO_ENABLED=0
RUN GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.revision=${REVISION}" -o /out/pregao ./cmd/pregao \
 && go build -trimpath -o /out/native/pregao ./cmd/pregao \
 && /out/native/pregao version

# demo-data: the deterministic demo universe built into a snapshot, and a
# demo API key (its digest in keys.json, the key itself in demo.key), by
# the builder's own binary (the snapshot format does not depend on the
# platform).
FROM build AS demo-data
ARG SEED=1
ARG SCALE=1
RUN mkdir -p /out/demo \
 && /out/native/pregao generate --seed "${SEED}" --scale "${SCALE}" --snapshot /out/demo/demo.snap \
 && /out/native/pregao keys add --file /out/demo/keys.json --name demo --plan delayed > /out/demo/demo.key

# runtime: no shell, no package manager, a non-root user (65532, "nonroot").
FROM gcr.io/distroless/static-debian12:nonroot${RUNTIME_IMAGE_DIGEST} AS runtime
ARG VERSION=""
ARG REVISION=""
ARG CREATED=""
LABEL org.opencontainers.image.title="pregao" \
      org.opencontainers.image.description="Pregão: a self-hosted market-data API server for the Brazilian market (B3 quotes, CVM filings)" \
      org.opencontainers.image.url="https://github.com/pregao/pregao" \
      org.opencontainers.image.source="https://github.com/pregao/pregao" \
      org.opencontainers.image.documentation="https://github.com/pregao/pregao/blob/main/docs/operations.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="Pregão" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=build /out/pregao /usr/local/bin/pregao
USER 65532:65532
# /metrics (the keys' names and their use) on a port of its own: a
# published 8080 gives clients the API, never the metrics.
ENV PREGAO_ADDR=:8080 \
    PREGAO_METRICS_ADDR=:9090 \
    PREGAO_LOG=json
EXPOSE 8080 9090
# /readyz on PREGAO_ADDR: 0 when a snapshot is served, 1 otherwise.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["/usr/local/bin/pregao", "healthcheck", "--quiet"]
ENTRYPOINT ["/usr/local/bin/pregao", "serve"]

# demo: docker run -p 8080:8080 pregao:demo; the log shows the demo key
# (PREGAO_PRINT_KEY), also in /var/lib/pregao/demo.key.
FROM runtime AS demo
COPY --from=demo-data --chown=65532:65532 /out/demo /var/lib/pregao
ENV PREGAO_SNAPSHOT=/var/lib/pregao/demo.snap \
    PREGAO_KEYS=/var/lib/pregao/keys.json \
    PREGAO_PRINT_KEY=/var/lib/pregao/demo.key

# server (default): mount a snapshot and a keys file and point
# PREGAO_SNAPSHOT and PREGAO_KEYS at them.
FROM runtime AS server
