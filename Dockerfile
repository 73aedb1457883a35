# mission-memory: one image, two roles (see compose.yaml):
#   mcp        mission-memory serve --transport http --host 0.0.0.0 --port 8765   (the default command)
#   refresher  mission-memory refresh run --schedule "*/30 * * * *" ...            (push mode, ADR 0015)
# Both keep their state in the SQLite store under /data (MISSION_MEMORY_DATA_DIR), or in the server
# MISSION_MEMORY_STORE names (PostgreSQL, Qdrant: the image carries both extras, docs/teams.md).
FROM python:3.11-slim

# git: the refresher and `ingest` read mission repositories through the git command line.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    # Repositories are bind-mounted and owned by another uid; let git read them.
    && git config --system --add safe.directory '*'

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MISSION_MEMORY_DATA_DIR=/data

WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install '.[postgres,qdrant]' && rm -rf /app/src

RUN useradd --create-home --uid 10001 --user-group mission \
    && mkdir -p /data \
    && chown mission:mission /data
USER mission
VOLUME ["/data"]
EXPOSE 8765

ENTRYPOINT ["mission-memory"]
CMD ["serve", "--transport", "http", "--host", "0.0.0.0", "--port", "8765"]
