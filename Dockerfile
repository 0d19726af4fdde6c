# syntax=docker/dockerfile:1
# powercontext: one static binary in a distroless image, run as a non-root user.
#
#   make image                      # docker build with VERSION, REVISION and BUILD_TIME from git
#   docker build --build-arg VERSION=v1.2.3 --build-arg REVISION=$(git rev-parse HEAD) -t powercontext:v1.2.3 .
#
# The binary is built by `make build`, the same target CI runs. The default command serves single_node on
# 0.0.0.0:8080 with SQLite under /var/lib/powercontext, which needs POWERCONTEXT_AUTH_TOKEN (a non-loopback listen
# address is refused without one); deploy/compose and deploy/kubernetes run the distributed roles.

ARG GO_VERSION=1.26.8
# Base images pinned by digest: set each to the sha256 digest of the image index of the tag above (all platforms),
# for example
#   docker buildx imagetools inspect golang:1.26.8-bookworm --format '{{json .Manifest.Digest}}'
#   docker buildx imagetools inspect gcr.io/distroless/static-debian12:nonroot --format '{{json .Manifest.Digest}}'
# (or `crane digest <image>`), then build with --build-arg GO_IMAGE_DIGEST=sha256:… --build-arg
# RUNTIME_IMAGE_DIGEST=sha256:… (make image passes GO_IMAGE_DIGEST and RUNTIME_IMAGE_DIGEST through), or write them
# here as the defaults. Empty, the tag alone is used (the tag may move); set, the pull fails unless the tag still
# names that exact image.
ARG GO_IMAGE_DIGEST=
ARG RUNTIME_IMAGE_DIGEST=

FROM golang:${GO_VERSION}-bookworm${GO_IMAGE_DIGEST:+@${GO_IMAGE_DIGEST}} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG REVISION=
ARG BUILD_TIME=
RUN BUILD_TIME="${BUILD_TIME:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}" \
 && make build VERSION="${VERSION}" REVISION="${REVISION}" BUILD_TIME="${BUILD_TIME}" \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot${RUNTIME_IMAGE_DIGEST:+@${RUNTIME_IMAGE_DIGEST}}
LABEL org.opencontainers.image.title="powercontext" \
      org.opencontainers.image.description="Durable, scope-isolated context for AI agents" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /src/bin/powercontext /usr/local/bin/powercontext
COPY --from=build --chown=65532:65532 /out/data /var/lib/powercontext
WORKDIR /var/lib/powercontext
USER 65532:65532
ENV POWERCONTEXT_HTTP_LISTEN=0.0.0.0:8080 \
    POWERCONTEXT_DATABASE_URL=sqlite:///var/lib/powercontext/powercontext.db
EXPOSE 8080
VOLUME ["/var/lib/powercontext"]
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD ["/usr/local/bin/powercontext", "server", "health"]
ENTRYPOINT ["/usr/local/bin/powercontext"]
CMD ["server", "run"]
