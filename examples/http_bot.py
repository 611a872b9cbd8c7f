"""A complete dicestream bot over the HTTP/WebSocket gateway, with only the standard library and
`websockets`: join a seat over HTTP (the token comes back once), optionally start the game, then
read turn requests on the seat's WebSocket and answer each with a random legal move on the same
socket. No Redis.

python examples/http_bot.py http://127.0.0.1:8080 GAME_ID SEAT [--start]
"""

import asyncio
import json
import random
import sys
import time
import urllib.error
import urllib.request

from websockets.asyncio.client import connect


def post(url, body, token=None):
    """POST JSON; (status, JSON body), problem details included."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


async def play(base, game_id, seat, start=False):
    seat_url = f"{base}/v1/games/{game_id}/seats/{seat}"
    status, joined = post(f"{seat_url}/join", {"name": "http-bot", "kind": "bot"})
    if status != 201:
        sys.exit(f"join refused: {joined['title']}: {joined.get('detail')}")
    token = joined["token"]  # shown this once: it is the seat
    while start:  # refused with GAME-SEATS-EMPTY until every seat is taken
        status, answer = post(f"{seat_url}/commands", {"type": "lifecycle.StartGame"}, token)
        start = status != 200 and answer.get("rule") == "GAME-SEATS-EMPTY"
        time.sleep(0.2 if start else 0)
    rng, answered = random.Random(seat), -1
    url = "ws" + base.removeprefix("http") + f"/v1/games/{game_id}/seats/{seat}/ws"
    async with connect(url, additional_headers={"Authorization": f"Bearer {token}"}) as ws:
        async for text in ws:
            message = json.loads(text)
            if message["type"] == "over":
                return message["scores"]
            if message["type"] == "turn" and message["version"] > answered:
                answered = message["version"]  # answer each version once
                action = rng.choice(message["legal_actions"])
                command = {**action, "expected_version": answered}
                await ws.send(json.dumps({"type": "command", "command": command}))
            elif message["type"] == "problem" and message["problem"].get("rule") != "GAME-STALE":
                print("refused:", message["problem"]["title"], message["problem"].get("detail"), file=sys.stderr)


if __name__ == "__main__":
    base, game, seat_no = sys.argv[1:4]
    print("final scores:", asyncio.run(play(base.rstrip("/"), game, int(seat_no), "--start" in sys.argv)))
