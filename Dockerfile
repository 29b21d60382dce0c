# The explorable behind a plain HTTP port; put nginx (or any proxy) in front for TLS.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PE_PORT=5006 \
    PE_ALLOWED_ORIGINS=localhost:5006 \
    PE_NUM_PROCS=0 \
    OPENBLAS_NUM_THREADS=1

RUN useradd --create-home --uid 10001 explorable
WORKDIR /srv/explorable

COPY pyproject.toml README.md ./
COPY app ./app
COPY components ./components
COPY static ./static
# Editable, so the package runs from this folder next to static/.
RUN pip install --no-cache-dir -e .

USER 10001
EXPOSE 5006

# Slim images have no curl: ask the liveness endpoint with Python itself.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/liveness' % os.environ.get('PE_PORT', '5006'), timeout=4)"]

# Allowed websocket origins come from PE_ALLOWED_ORIGINS (comma separated).
CMD ["python", "-m", "app", "--address", "0.0.0.0"]
