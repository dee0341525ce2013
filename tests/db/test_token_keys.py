"""PAPERPING_TOKEN_KEY: several keys for rotation (the newest first), checked against the stored tokens at
start, re-encrypting with the first key; a wrong key stops the start, not the channels."""

from __future__ import annotations

import pytest
from slack_sdk.oauth.installation_store import Installation

from bot.slack.installation_store import PostgresInstallationStore, check_token_keys
from socialrag import storage
from socialrag.db import Database
from socialrag.errors import ConfigError, KeyMismatch
from socialrag.token_cipher import PREFIX, TokenCipher, generate_key


def _install(db: Database, key: str, team: str, token: str) -> None:
    PostgresInstallationStore(db, TokenCipher(key)).save(
        Installation(team_id=team, bot_token=token, bot_user_id="UB", user_id="U1", bot_scopes=["chat:write"])
    )


def _stored(db: Database) -> dict[str, str]:
    with db.connection() as conn:
        return dict(storage.installs.load_stored_tokens(conn))


def test_rotation_new_key_first_old_after(db: Database) -> None:
    old, new = generate_key(), generate_key()
    _install(db, old, "T1", "xoxb-one")
    _install(db, old, "T2", "xoxb-two")
    assert check_token_keys(db, TokenCipher(f"{new}, {old}")) == []
    alone = TokenCipher(new)
    assert {t: alone.decrypt(v) for t, v in _stored(db).items()} == {"T1": "xoxb-one", "T2": "xoxb-two"}
    with pytest.raises(KeyMismatch):
        TokenCipher(old).decrypt(_stored(db)["T1"])
    assert check_token_keys(db, alone) == [], "the old key can now be dropped"


def test_a_key_that_opens_no_token_stops_the_start(db: Database) -> None:
    _install(db, generate_key(), "T1", "xoxb-one")
    before = _stored(db)
    with pytest.raises(ConfigError, match="opens none of the 1 stored bot tokens"):
        check_token_keys(db, TokenCipher(generate_key()))
    assert _stored(db) == before, "nothing is rewritten with a key that opens nothing"


def test_a_key_that_opens_some_names_the_others(db: Database) -> None:
    key = generate_key()
    _install(db, key, "T1", "xoxb-one")
    _install(db, generate_key(), "T2", "xoxb-two")
    assert check_token_keys(db, TokenCipher(key)) == ["T2"]


def test_a_token_stored_before_encryption_is_encrypted_at_start(db: Database) -> None:
    key = generate_key()
    with db.connection() as conn:
        storage.installs.upsert_installation(
            conn,
            {
                "team_id": "T1",
                "team_name": "Lab",
                "bot_token": "xoxb-plain",
                "bot_user_id": "UB",
                "bot_id": "B1",
                "installer_id": "U1",
                "scopes": "chat:write",
            },
        )
    assert _stored(db)["T1"] == "xoxb-plain"
    check_token_keys(db, TokenCipher(key))
    stored = _stored(db)["T1"]
    assert stored.startswith(PREFIX) and "xoxb" not in stored
    assert TokenCipher(key).decrypt(stored) == "xoxb-plain"


def test_a_key_list_must_hold_valid_keys() -> None:
    with pytest.raises(ConfigError, match="not a valid key"):
        TokenCipher(f"{generate_key()},not-a-key")
    with pytest.raises(ConfigError, match="holds no key"):
        TokenCipher(" , ")
