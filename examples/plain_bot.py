"""A complete dicestream bot using only redis-py and json: join a seat, play random legal moves.

python examples/plain_bot.py GAME_ID SEAT [REDIS_URL] [PREFIX] [SHARDS] [CLUSTER]
(CLUSTER: 1 when REDIS_URL is a node of a Redis Cluster)
"""

import json
import random
import sys
import uuid
import zlib

import redis
from redis.cluster import RedisCluster


def play(game_id, seat, url="redis://127.0.0.1:6379/0", prefix="ds", shards=64, cluster=False, client="plain"):
    r = RedisCluster.from_url(url) if cluster else redis.Redis.from_url(url)
    intake = f"{prefix}:cmd:{{{zlib.crc32(game_id.encode()) % shards}}}"  # the game's shard
    if r.sismember(f"{prefix}:clients", client):  # a registered client writes its own intake
        intake += f":{client}"
    # Replies (the seat token among them) go to a stream under this client's name.
    replies, seat_stream = f"{prefix}:reply:{client}:{uuid.uuid4().hex}", f"{prefix}:game:{{{game_id}}}:seat:{seat}"

    def send(type_, payload, **extra):
        command = {
            "type": type_,
            "game_id": game_id,
            "command_id": uuid.uuid4().hex,
            "seat": seat,
            "payload": payload,
            **extra,
        }
        r.xadd(intake, {"data": json.dumps(command)})
        return command["command_id"]

    command_id = send("lifecycle.JoinSeat", {"seat": seat, "name": "plain-bot", "kind": "bot"}, reply_to=replies)
    reply = None
    while reply is None:  # the seat token comes back once, on our reply stream
        for _, entries in r.xread({replies: "0-0"}, block=10_000) or []:
            reply = next(json.loads(f[b"data"]) for _, f in entries)
    r.delete(replies)
    if reply["outcome"]["command_id"] != command_id or reply["outcome"]["status"] != "accepted":
        sys.exit(f"join refused: {reply['outcome']['rule']} {reply['outcome']['detail']}")
    token, last, answered, rng = reply["token"], "0-0", -1, random.Random(seat)
    while True:
        for _, entries in r.xread({seat_stream: last}, block=30_000) or []:
            last, fields = entries[-1]  # only the latest request matters
            message = json.loads(fields[b"data"])
            if message["type"] == "over":
                return message["scores"]
            if message["version"] > answered:
                answered = message["version"]
                action = rng.choice(message["legal_actions"])
                send(action["type"], action["payload"], token=token, expected_version=message["version"])


if __name__ == "__main__":
    game, seat_no, *rest = sys.argv[1:]
    print("final scores:", play(game, int(seat_no), *rest[:2], *map(int, rest[2:3]), *map(bool, map(int, rest[3:4]))))
