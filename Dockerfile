# syntax=docker/dockerfile:1
# dicestream services image: one image, one service per container (`dicestream serve NAME`).
#   docker build -t dicestream .
#   docker run --rm -e REDIS_URL=redis://redis:6379/0 dicestream serve projector
# Configuration is environment only (services/config.py ENV_VARS). The only network access
# during the build is pip fetching the dependencies declared in pyproject.toml.

# The build stage is the full image of the same Python and Debian release as the runtime: it has
# the C compiler and headers that the native modules (games/sentient/native.pyx,
# games/prosperity/playout.pyx, games/artifacts/playout.pyx) need. The slim image has none, and pip
# then skips them silently (they are optional in pyproject.toml): the hosted Prosperity and
# Artifacts, Inc. searches would roll out in Python, 20-40 times slower, so at their one-second
# budget they would play far weaker.
FROM python:3.11-bookworm AS build
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
# Wheels of the project (with its native modules, compiled here) and of every dependency.
RUN pip wheel --wheel-dir /wheels .

FROM python:3.11-slim-bookworm
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# /livez, /readyz and /metrics (DICESTREAM_HEALTH_ADDR) must be reachable from outside the container.
ENV DICESTREAM_HEALTH_ADDR=0.0.0.0:9100
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels dicestream \
 && python -c "import games.sentient.native, games.prosperity.playout, games.artifacts.playout" \
 && groupadd --system --gid 10001 dicestream \
 && useradd --system --uid 10001 --gid 10001 --home-dir /app --create-home --shell /usr/sbin/nologin dicestream
# Numeric user so Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
WORKDIR /app
ENTRYPOINT ["dicestream"]
EXPOSE 9100 8080
CMD ["serve", "referee"]
