"""Reinforcement-learning adapters (the optional `rl` extra: `pip install 'dicestream[rl]'`).

* `rl.actions`: a fixed action encoding per game (index <-> command struct) and legal masks.
* `rl.observation`: a fixed-size float32 vector from a seat's typed view.
* `rl.pettingzoo_env`: a PettingZoo AEC environment per game (`rl.pettingzoo_env.env`).
* `rl.openspiel_game`: an OpenSpiel Python game per title ("python_dicestream_<game>").

`rl.actions` needs nothing beyond dicestream, `rl.observation` numpy; the other two import their
libraries.
"""
