# The crawler in a container. Database, reports and the heartbeat live on the /data volume; the
# GitHub token, the database URL and notification URLs come from the environment at run time
# (never baked into the image). Dependencies are pinned by deploy/constraints.txt.
#   docker build -t crawler .
#   docker run -d --name crawler -e GITHUB_TOKEN -v crawler-data:/data crawler   # schedule mode
#   docker run --rm --no-healthcheck -e GITHUB_TOKEN -v crawler-data:/data crawler \
#       audit --config /app/sources.yaml                                        # one audit (cron)
FROM python:3.11-slim
WORKDIR /app
COPY deploy/constraints.txt /app/deploy/constraints.txt
COPY pyproject.toml README.md /app/
COPY crawler /app/crawler
RUN pip install --no-cache-dir --constraint /app/deploy/constraints.txt '/app[postgres]' \
    && useradd --uid 10001 --create-home --shell /usr/sbin/nologin crawler \
    && mkdir /data && chown crawler:crawler /data
COPY sources.yaml /app/sources.yaml
USER crawler
WORKDIR /data
VOLUME ["/data"]
# the license index cache on the volume: the root filesystem may be read-only (Kubernetes)
ENV CRAWLER_DB_URL=sqlite:////data/crawler.sqlite \
    CRAWLER_HEARTBEAT=/data/heartbeat.json \
    CRAWLER_CACHE_DIR=/data/cache \
    PYTHONUNBUFFERED=1
# schedule mode writes the heartbeat every minute; `crawler health` fails when it is 3 minutes old
HEALTHCHECK --interval=60s --timeout=10s --start-period=120s --retries=3 \
    CMD ["crawler", "health", "--max-age", "180"]
# SIGTERM (docker stop) lets a running audit finish its current project: give it time
STOPSIGNAL SIGTERM
ENTRYPOINT ["crawler"]
CMD ["schedule", "--config", "/app/sources.yaml", "--reports", "/data/reports"]
