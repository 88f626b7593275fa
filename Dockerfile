# pgxsafety container image: a static binary on an empty base.
#
#   docker build -t pgxsafety:local .
#   docker run --rm --read-only --tmpfs /tmp -v pgxsafety-data:/data \
#     -e PGXSAFETY_OIDC_ISSUER=... -e PGXSAFETY_OIDC_AUDIENCE=... -p 8080:8080 pgxsafety:local
#
# Without an OpenID Connect issuer the server runs in local development mode,
# which listens on loopback only: the image's PGXSAFETY_ADDR (0.0.0.0:8080) is
# then refused at start. compose.yaml runs the development mode behind a
# reverse proxy in one network namespace instead (docs/operations.md).
#
# The build needs only the Go toolchain: every dependency is pure Go
# (modernc.org/sqlite, jackc/pgx), so CGO_ENABLED=0 links a static binary.
# GO_IMAGE may name any image with Go (the go.mod version) on PATH.
ARG GO_IMAGE=golang:1.26-bookworm

FROM ${GO_IMAGE} AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
COPY go.mod go.sum ./
RUN ["go", "mod", "download"]
COPY . .
# timetzdata: the FHIR mapping reads IANA time zones; the image has no
# zoneinfo.
RUN ["go", "build", "-trimpath", "-tags", "timetzdata", "-ldflags", "-s -w", "-o", "/out/pgxsafety", "./cmd/pgxsafety"]
# The data directory, created empty here (WORKDIR needs no shell) and owned
# by the service user in the image, so a new named volume inherits it.
WORKDIR /out/data

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/pgxsafety /pgxsafety
COPY --from=build --chown=65532:65532 /out/data /data
# The code's licence and the embedded knowledge's (CC BY-SA 4.0 rows must
# travel with their notice).
COPY LICENSE NOTICE /licenses/
COPY knowledge/data/LICENCE.md /licenses/knowledge-data-LICENCE.md
# Not root: a numeric user needs no /etc/passwd.
USER 65532:65532
ENV PGXSAFETY_DATA_DIR=/data \
    PGXSAFETY_ADDR=0.0.0.0:8080 \
    PGXSAFETY_LOG_FORMAT=json
VOLUME ["/data"]
EXPOSE 8080
# /readyz at PGXSAFETY_ADDR (an unspecified host is probed on loopback).
HEALTHCHECK --interval=15s --timeout=6s --start-period=30s --retries=3 CMD ["/pgxsafety", "healthcheck"]
ENTRYPOINT ["/pgxsafety"]
CMD ["serve"]
# LicenseRef-pgxsafety-knowledge-data: the embedded knowledge's licences
# (CPIC CC0 1.0, ClinPGx/PharmGKB CC BY-SA 4.0 and the others named row by
# row), in /licenses/knowledge-data-LICENCE.md.
LABEL org.opencontainers.image.title="pgxsafety" \
      org.opencontainers.image.description="Pharmacogenomic drug-safety service (clinical decision support)" \
      org.opencontainers.image.licenses="Apache-2.0 AND LicenseRef-pgxsafety-knowledge-data"
