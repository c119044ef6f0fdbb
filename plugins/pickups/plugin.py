"""Health packs, written in Python, for the arena: the server drops a pack every three seconds while fewer than
three lie about, and a hero that comes within reach of one (both positions are the game's `Position`) gets 40
health back, up to 200, and the pack is gone. The game only places and draws the packs: what they do is here."""

import gamefeature as gf
from gamefeature import log, timers, world

DROP, CHECK = 1, 2  # timers
MOST_PACKS = 3
REACH = 1.5  # arena units
HEAL = 40
MOST_HEALTH = 200


def position(actor):
    """The actor's place in the arena, or None while the game has not placed it."""
    try:
        x = world.get_property(actor, "Position", "x")
        y = world.get_property(actor, "Position", "y")
    except gf.HostError:
        return None
    return None if x is None or y is None else (x, y)


class Pickups(gf.Plugin):
    def __init__(self):
        self.packs = []
        self.picked = 0
        self.timers = []

    def on_activating(self, context):
        if world.net_mode() == world.NetMode.CLIENT:
            return
        self.timers = [timers.every(3.0, DROP), timers.every(0.2, CHECK)]

    def on_timer(self, timer, times, frame):
        self.packs = [pack for pack in self.packs if self.exists(pack)]
        if timer == DROP and len(self.packs) < MOST_PACKS:
            self.packs.append(world.spawn_actor("Pickup"))
        elif timer == CHECK:
            self.check_reach()

    def exists(self, actor):
        try:
            world.actor_class(actor)
            return True
        except gf.HostError:
            return False

    def check_reach(self):
        heroes = [(hero, position(hero)) for hero in world.actors_of_class("HeroCharacter")]
        for pack in list(self.packs):
            spot = position(pack)
            if spot is None:
                continue
            for hero, at in heroes:
                if at is None or (at[0] - spot[0]) ** 2 + (at[1] - spot[1]) ** 2 > REACH * REACH:
                    continue
                health = world.get_property(hero, "HealthComponent", "health")
                if not isinstance(health, int) or health <= 0:
                    continue  # a hero that is down picks up nothing
                healed = min(health + HEAL, MOST_HEALTH)
                world.set_property(hero, "HealthComponent", "health", healed)
                world.destroy_actor(pack)
                self.packs.remove(pack)
                self.picked += 1
                log.info(f"hero {hero} picked up a health pack: {health} -> {healed}")
                break

    def on_deactivating(self, context):
        for timer in self.timers:
            timer.release()
        log.info(f"{self.picked} health pack(s) picked up")
        return gf.DONE
