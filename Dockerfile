# syntax=docker/dockerfile:1
#
# The operator image: `mo-operator run` as a non-root user on a read-only root
# filesystem. Build from the repository root:
#
#   docker build -t mo-operator:0.1.0 .
#
# Stage 1 builds the wheel of the operator (`python -m build`: src/mo_operator
# only, never the dev kit in devkit/, nor kubectl); stage 2 installs it with its
# dependencies (binary wheels from PyPI, at the versions constraints.txt pins,
# the ones CI tested) into a clean slim image, so neither build tooling nor the
# source tree ships. tests/unit/deploy/test_wheel.py checks what that wheel
# holds and declares; tests/unit/deploy/test_version.py that VERSION below is
# pyproject.toml's version.

ARG PYTHON_IMAGE=python:3.11-slim
ARG VERSION=0.1.0

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# Only what the build reads, so unrelated changes do not invalidate the cache.
COPY constraints.txt pyproject.toml README.md LICENSE ./
COPY src ./src
RUN python -m pip install --constraint constraints.txt build \
 && python -m build --wheel --outdir /dist .

FROM ${PYTHON_IMAGE} AS runtime
ARG VERSION
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
# --compile: the bytecode is written now, because at run time nothing may be
# written next to the code (the root filesystem is read-only).
COPY constraints.txt /tmp/constraints.txt
RUN --mount=type=bind,from=build,source=/dist,target=/dist \
    python -m pip install --compile --constraint /tmp/constraints.txt /dist/*.whl \
 && rm /tmp/constraints.txt \
 && groupadd --system --gid 65532 nonroot \
 && useradd --system --uid 65532 --gid 65532 --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin nonroot
# HOME and TMPDIR point at /tmp, the one writable mount (an emptyDir).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    TMPDIR=/tmp
LABEL org.opencontainers.image.title="mo-operator" \
      org.opencontainers.image.description="The MatrixOne operator for Kubernetes" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
# Numeric, so the kubelet can verify runAsNonRoot without reading /etc/passwd.
USER 65532:65532
WORKDIR /tmp
# metrics, health probes, admission webhooks
EXPOSE 8080 8081 9443
ENTRYPOINT ["mo-operator"]
CMD ["run"]
