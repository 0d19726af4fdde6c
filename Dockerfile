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

FROM golang:${GO_VERSION}-bookworm AS build
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

FROM gcr.io/distroless/static-debian12:nonroot
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
