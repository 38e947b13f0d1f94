# Nightly audit in a container. Database and reports live on the /data volume.
#   docker build -t crawler .
#   docker run --rm -e GITHUB_TOKEN -v crawler-data:/data crawler              # one audit (cron)
#   docker run -d -e GITHUB_TOKEN -v crawler-data:/data crawler schedule \
#       --config /app/sources.yaml --run-now                                  # stays up
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY crawler ./crawler
RUN pip install --no-cache-dir '.[postgres]' && useradd --create-home crawler \
    && mkdir /data && chown crawler /data
COPY sources.yaml /app/sources.yaml
USER crawler
WORKDIR /data
ENV CRAWLER_DB_URL=sqlite:////data/crawler.sqlite
ENTRYPOINT ["crawler"]
CMD ["audit", "--config", "/app/sources.yaml"]
