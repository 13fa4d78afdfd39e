# ssrisk with every renderer inside: Helm's engine (the `helm` extra) and kustomize.
#   docker build -t ssrisk .
#   docker run --rm -v "$PWD:/src:ro" ssrisk check /src
# The checked tree is mounted read-only; ssrisk writes only what --output names.

# kustomize, built from its module at a pinned version (Go verifies the module's checksum
# against sum.golang.org), statically linked
FROM golang:1.25-bookworm AS kustomize
ARG KUSTOMIZE_VERSION=v5.8.1
RUN CGO_ENABLED=0 GOBIN=/out go install "sigs.k8s.io/kustomize/kustomize/v5@${KUSTOMIZE_VERSION}"

FROM python:3.12-slim-bookworm AS build
# a C compiler and libyaml's headers build ssrisk's compiled YAML reader (ssrisk/_cyaml.c)
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev libyaml-dev \
    && rm -rf /var/lib/apt/lists/*
COPY . /src
RUN python -m pip wheel --no-cache-dir --no-deps --wheel-dir /wheels /src

FROM python:3.12-slim-bookworm
COPY --from=kustomize /out/kustomize /usr/local/bin/kustomize
COPY --from=build /wheels /wheels
RUN apt-get update \
    && apt-get install -y --no-install-recommends libyaml-0-2 \
    && rm -rf /var/lib/apt/lists/* \
    && wheel="$(ls /wheels/ssrisk-*.whl)" \
    && python -m pip install --no-cache-dir "${wheel}[helm]" \
    && rm -rf /wheels \
    && useradd --create-home --uid 10001 ssrisk
USER ssrisk
WORKDIR /src
ENTRYPOINT ["ssrisk"]
CMD ["--help"]
