# adcp-conform as a container image, for registries that run it in
# Kubernetes (docs/examples/kubernetes-indexed-job.yaml): a static binary on
# distroless, no shell, running as the non-root user 65532.
#
#   docker build --build-arg VERSION=0.2.0 --build-arg COMMIT=$(git rev-parse HEAD) -t adcp-conform:0.2.0 .
#   docker run --rm -v "$PWD/out:/work/out" adcp-conform:0.2.0 run --mcp https://seller.example/mcp --out /work/out
#
# The release workflow builds it for linux/amd64 and linux/arm64 and pushes
# ghcr.io/adcp-conform/adcp-conform:<version>.
FROM --platform=$BUILDPLATFORM golang:1.25 AS build
ARG TARGETOS TARGETARCH
ARG VERSION=0.1.0-dev
ARG COMMIT=
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
      -ldflags "-s -w -X github.com/adcp-conform/adcp-conform/internal/cli.Version=${VERSION} -X github.com/adcp-conform/adcp-conform/internal/cli.Commit=${COMMIT}" \
      -o /out/adcp-conform ./cmd/adcp-conform \
 && mkdir -p /out/work

# static-debian12: CA certificates and tzdata, nothing else; :nonroot runs
# as uid/gid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/adcp-conform /usr/local/bin/adcp-conform
# The working folder, writable by the non-root user: reports go to
# /work/adcp-conform-report unless --out says otherwise (mount a volume).
COPY --from=build --chown=65532:65532 /out/work /work
USER 65532:65532
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/adcp-conform"]
CMD ["version"]
