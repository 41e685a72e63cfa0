# syntax=docker/dockerfile:1
#
# Pregão container images (docs/operations.md, "Container image").
#
#   docker build -t pregao .                     the server (the default, last stage)
#   docker build --target demo -t pregao:demo .  the server with the demo snapshot and a demo key
#
# `make docker` and `make docker-demo` pass VERSION and REVISION (the
# repository's .git is not sent to the builder, so the go command cannot
# record them itself). The server is configured by PREGAO_* environment
# variables, one per `pregao serve` flag.

ARG GO_VERSION=1.26.10

# build: a static binary (no cgo, so no libc), paths trimmed.
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG REVISION=""
ENV CGO_ENABLED=0
RUN go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.revision=${REVISION}" -o /out/pregao ./cmd/pregao \
 && /out/pregao version

# demo-data: the deterministic demo universe built into a snapshot, and a
# demo API key (its digest in keys.json, the key itself in demo.key).
FROM build AS demo-data
ARG SEED=1
ARG SCALE=1
RUN mkdir -p /out/demo \
 && /out/pregao generate --seed "${SEED}" --scale "${SCALE}" --out /tmp/bundle \
 && /out/pregao build --from /tmp/bundle --out /out/demo/demo.snap \
 && /out/pregao keys add --file /out/demo/keys.json --name demo --plan delayed > /out/demo/demo.key \
 && rm -rf /tmp/bundle

# runtime: no shell, no package manager, a non-root user (65532, "nonroot").
FROM gcr.io/distroless/static-debian12:nonroot AS runtime
COPY --from=build /out/pregao /usr/local/bin/pregao
USER 65532:65532
ENV PREGAO_ADDR=:8080 \
    PREGAO_LOG=json
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/pregao", "serve"]

# demo: docker run -p 8080:8080 pregao:demo; the key is in /var/lib/pregao/demo.key.
FROM runtime AS demo
COPY --from=demo-data --chown=65532:65532 /out/demo /var/lib/pregao
ENV PREGAO_SNAPSHOT=/var/lib/pregao/demo.snap \
    PREGAO_KEYS=/var/lib/pregao/keys.json

# server (default): mount a snapshot and a keys file and point
# PREGAO_SNAPSHOT and PREGAO_KEYS at them.
FROM runtime AS server
