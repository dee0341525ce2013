"""The image and the compose file keep a lab's data across an upgrade, and the Deploy section says how: the
container runs as a user of its own, holds no secret, keeps the home and Postgres's data on volumes, and the page
names the volume a single container needs (without one, Docker gives each new container an empty home)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _deploy_section() -> str:
    page = (ROOT / "docs" / "slack.md").read_text()
    return page[page.index("## Deploy") :]


def test_the_image_runs_as_its_own_user_with_the_home_on_a_volume_and_no_secret() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    final = dockerfile[dockerfile.rindex("\nFROM ") :]
    assert re.search(r"^USER [1-9][0-9]*$", final, re.M), "the final stage runs as a non-root user"
    assert "PAPERPING_HOME=/data" in final and 'VOLUME ["/data"]' in final
    settings = re.findall(r"^(?:ENV|ARG)\s+(.*)$", dockerfile, re.M)
    assert not [s for s in settings if re.search(r"TOKEN|SECRET|KEY|PASSWORD", s)], "no secret in the image"
    assert "COPY . " not in dockerfile, "only the package's folders are copied (never a .env beside them)"


def test_compose_keeps_postgres_data_on_a_named_volume() -> None:
    compose = (ROOT / "docker-compose.yml").read_text()
    assert "- pgdata:/var/lib/postgresql/data" in compose
    assert re.search(r"^volumes:\n  pgdata:", compose, re.M)


def test_the_deploy_section_says_how_the_data_survives_an_upgrade() -> None:
    section = _deploy_section()
    runs = [
        line
        for line in section.splitlines()
        if line.startswith("docker run") and " run" in line.split("paperping", 1)[-1]
    ]
    assert runs, "the page shows how to run the service from the image"
    assert all(re.search(r"-v [a-z][\w.-]*:/data\b", line) for line in runs), "each names a volume for the home"
    assert "docker compose up -d --build" in section, "how a compose install takes a new version"
    assert "down -v" in section, "the one command that deletes the data is named"
