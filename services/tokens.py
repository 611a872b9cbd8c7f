"""Seat tokens: HMAC of (game, seat, join command) under the service secret.

Deriving instead of drawing lets a redelivered JoinSeat hand back the same token without the
token ever being stored; the log keeps only SHA-256(token)."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def seat_token(secret: bytes, game_id: str, seat: int, command_id: str) -> str:
    return hmac.new(secret, f"{game_id}|{seat}|{command_id}".encode(), hashlib.sha256).hexdigest()


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_seed() -> str:
    return secrets.token_hex(32)
