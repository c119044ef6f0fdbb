"""The scoreboard, written in Python: it follows every player's score (a property another plugin writes, and
that replicates to clients) through a property watch, seats each hero on the board once the hero reaches
GameplayReady (an init-state subscription), and prints the standings at end of play."""

import gamefeature as gf
from gamefeature import components, init_states, log

PLAYER_STATES = 1  # extension handler
SCORES = 2  # property watches
HEROES_READY = 3  # init-state subscription


class Scoreboard(gf.Plugin):
    def __init__(self):
        self.scores = {}  # player state -> score
        self.watches = {}  # player state -> its score watch
        self.seated = []  # heroes, in the order they became ready

    def on_activating(self, context):
        self.world = context.world_name
        self.players = components.add_extension_handler("PlayerState", PLAYER_STATES)
        self.heroes_ready = init_states.subscribe_class(
            "HeroCharacter", "Hero", HEROES_READY, state=init_states.GAMEPLAY_READY
        )

    def on_extension_event(self, handler, player, event):
        if event in (components.EXTENSION_ADDED, components.RECEIVER_ADDED):
            self.watches[player] = components.watch_property(player, "ScoreComponent", "score", SCORES)
            self.scores.setdefault(player, 0)
        elif event in (components.EXTENSION_REMOVED, components.RECEIVER_REMOVED):
            watch = self.watches.pop(player, None)
            if watch is not None:
                watch.release()

    def on_property_changed(self, watch, player, old, new):
        self.scores[player] = new or 0
        leader = max(self.scores, key=lambda p: (self.scores[p], -p))
        # Every point scored: a detail, at debug level (seats and final standings are the story).
        log.debug(f"player {player}: {old or 0} -> {new or 0} points (leader: player {leader})")

    def on_init_state_changed(self, subscription, hero, feature, state):
        self.seated.append(hero)
        log.info(f"hero {hero} takes seat {len(self.seated)} on the scoreboard")

    def on_deactivating(self, context):
        standings = sorted(self.scores.items(), key=lambda item: (-item[1], item[0]))
        board = ", ".join(f"player {player}: {score}" for player, score in standings) or "nobody played"
        log.info(f"final standings in {self.world}: {board}; {len(self.seated)} hero(es) seated")
        for watch in self.watches.values():
            watch.release()
        self.watches.clear()
        self.players.release()
        self.heroes_ready.release()
        return gf.DONE
